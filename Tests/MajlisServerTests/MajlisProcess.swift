import Foundation
import MajlisTestSupport

/// The real `majlis` executable (built next to the tests) run as a child process.
struct MajlisProcess: Sendable {
    let process = Process()
    let url: String
    /// Everything printed up to and including the ready line.
    let banner: String

    static var executable: URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for configuration in ["debug", "release"] {
            let candidate = root.appendingPathComponent(".build/\(configuration)/majlis")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return root.appendingPathComponent(".build/debug/majlis")
    }

    /// Starts `majlis ARGS` (with at most `fileLimit` open files, when given) and waits for its ready line.
    init(arguments: [String], fileLimit: Int? = nil) throws {
        if let fileLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(fileLimit) && exec \"$0\" \"$@\"", Self.executable.path] + arguments
        } else {
            process.executableURL = Self.executable
            process.arguments = arguments
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        let handle = output.fileHandleForReading
        while !text.contains("majlis ready:") {
            let chunk = handle.availableData
            if chunk.isEmpty { throw TestClient.Timeout(description: "majlis exited before it was ready: \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let line = text.split(separator: "\n").first { $0.hasPrefix("majlis ready:") }!
        url = String(line.split(separator: " ")[2])
        banner = text
    }

    /// `init` on a thread of its own: waiting for the ready line (seconds on a busy machine)
    /// leaves the tests' few async threads to the others meanwhile.
    static func start(arguments: [String], fileLimit: Int? = nil) async throws -> MajlisProcess {
        try await offPool { try MajlisProcess(arguments: arguments, fileLimit: fileLimit) }
    }

    /// SIGKILL: no shutdown, no flush.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitForExit()
    }

    /// SIGTERM (and SIGCONT, so a process a test paused reads it), then waits for a clean
    /// exit; returns the exit status. One still running after `patience` seconds is killed
    /// (status 9), so a test that fails half-way never leaves the suite waiting on its server.
    @discardableResult
    func terminate(patience: Double = 60) -> Int32 {
        if let status = process.exitStatus { return status }
        process.terminate()
        Foundation.kill(process.processIdentifier, SIGCONT)
        let deadline = Date().addingTimeInterval(patience)
        while process.isAlive, Date() < deadline { usleep(20_000) }
        if process.isAlive { kill() }
        return process.waitForExit()
    }
}
