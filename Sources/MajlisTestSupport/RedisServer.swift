import Foundation
import MajlisServer

/// A throwaway Redis server for tests: in a temporary folder, on a free loopback port, keeping
/// nothing on disk. Started on first use and stopped when the test process exits; tests that
/// stop and start it (an outage) make one of their own.
public final class RedisServer: Sendable {
    public let directory: String
    public let port: Int

    /// The server every test of this process shares (nil when Redis is not installed).
    public static let shared: RedisServer? = {
        let server = try? RedisServer()
        if server != nil { atexit { RedisServer.shared?.stop() } }
        return server
    }()

    private static let program = "/usr/bin/redis-server"

    public init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.program) else {
            throw TestClient.Timeout(description: "Redis is not installed (scripts/install-deps --test)")
        }
        directory = "/tmp/majlis-redis-\(getpid())-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try LoopbackSocket.freePort()
        try start()
    }

    /// Its URL (database `database`: tests that share the server keep apart in their own).
    public func url(database: Int = 0) -> String { "redis://127.0.0.1:\(port)/\(database)" }

    /// Starts the server (again, after `halt`) on the same port, empty.
    public func start() throws {
        let status = try ChildProcess.run([
            Self.program, "--port", String(port), "--bind", "127.0.0.1", "--dir", directory, "--save", "", "--appendonly", "no",
            "--daemonize", "yes", "--pidfile", "\(directory)/pid", "--logfile", "\(directory)/log", "--databases", "64",
        ])
        guard status == 0 else { throw TestClient.Timeout(description: "redis-server did not start (exit \(status)); see \(directory)/log") }
        let deadline = Date().addingTimeInterval(10)
        while !answers {
            guard Date() < deadline else { throw TestClient.Timeout(description: "redis-server did not answer on \(port) within 10 s; see \(directory)/log") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Whether it answers PING now.
    public var answers: Bool {
        guard let client = try? RedisClient(url: url(), timeout: 1) else { return false }
        return (try? client.command(["PING"])) == .status("PONG")
    }

    /// Stops the server as an outage would (connections cut, everything in it lost).
    public func halt() {
        guard let text = try? String(contentsOfFile: "\(directory)/pid", encoding: .utf8), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return }
        kill(pid, SIGKILL)
        // Gone once it no longer answers (a zombie nobody reaps would still pass kill(pid, 0)).
        let deadline = Date().addingTimeInterval(5)
        while answers, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        try? FileManager.default.removeItem(atPath: "\(directory)/pid")
    }

    public func stop() {
        halt()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
