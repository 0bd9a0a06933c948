import Foundation
import MajlisCommandLine
import MajlisProtocol
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MajlisTransport

/// `majlis serve` run as a child of this process (for benchmarks), on free loopback ports with
/// a throwaway data directory and one API key.
final class ServerProcess {
    static let key = "bench"
    static let secret = "bench-secret-0123456789abcdef"

    let process = Process()
    let url: String
    private var stopped = false
    private let data = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-bench-\(UUID().uuidString)").path

    /// Starts `majlis serve`, with `extra` flags after the usual ones.
    init(extra: [String] = []) throws {
        let arguments = [
            "serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", data, "--keys", "\(Self.key):\(Self.secret)",
            "--log-level", "error", "--max-connections-per-address", "100000", "--media-realtime",
        ] + extra
        process.executableURL = URL(fileURLWithPath: siblingExecutable("majlis"))
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var text = ""
        while !text.contains("majlis ready:") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw Arguments.Failure(description: "the server exited before it was ready") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let line = text.split(separator: "\n").first { $0.hasPrefix("majlis ready:") }!
        url = String(line.split(separator: " ")[2])
    }

    var pid: Int32 { process.processIdentifier }

    /// The server's `/healthz` answer.
    func health() -> JSONValue? {
        guard let address = URL(string: url.replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/v1/signal", with: "/healthz")) else { return nil }
        let answer = Mutex<Data?>(nil)
        let finished = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: address) { data, _, _ in
            answer.withLock { $0 = data }
            finished.signal()
        }.resume()
        _ = finished.wait(timeout: .now() + 5)
        return answer.withLock { $0 }.flatMap { try? JSONDecoder().decode(JSONValue.self, from: $0) }
    }

    /// The server's write delays (answers, events) so far, from `/healthz`.
    func writeDelays() -> (answers: DelayHistogram, events: DelayHistogram)? {
        guard let signaling = health()?["signaling"],
            let answers = signaling["answers"]?["histogram"].flatMap({ try? JSONValueDecoder().decode(DelayHistogram.self, from: $0) }),
            let events = signaling["events"]?["histogram"].flatMap({ try? JSONValueDecoder().decode(DelayHistogram.self, from: $0) })
        else { return nil }
        return (answers, events)
    }

    /// From room ops' arrival to the start of their work on their room's queue so far, from `/healthz`.
    func queueWaits() -> DelayHistogram? {
        health()?["signaling"]?["queued"]?["histogram"].flatMap { try? JSONValueDecoder().decode(DelayHistogram.self, from: $0) }
    }

    /// The child's resident set size in KiB (Linux /proc).
    func residentKiB() -> Int { Self.residentKiB(pid: pid) }

    /// Process `pid`'s resident set size in KiB (Linux /proc).
    static func residentKiB(pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
    }

    /// The kernel id of the child's thread named `name` (Linux /proc), if there is one.
    func threadId(named name: String) -> Int32? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        return tasks.first { (try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) == name }
            .flatMap { Int32($0) }
    }

    /// CPU time (user and system) the child has used, in seconds: from its process CPU clock,
    /// which counts to the nanosecond, as the bare forwarder's thread clock does (`/proc`'s
    /// figure is rounded to 10 ms, a twentieth of a benchmark turn's CPU time).
    func cpuSeconds() -> Double {
        var clock = clockid_t()
        var spec = timespec()
        guard clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &spec) == 0 else { return 0 }
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// An access token for `user` (create, join, publish, chat), valid for an hour.
    static func token(_ user: String) -> String {
        let claims = AccessClaims(sub: user, exp: Int64(Date().timeIntervalSince1970) + 3600, grants: Grants(create: true))
        return AccessToken.sign(claims, key: key, secret: secret)
    }

    /// A token for the server API (admin, every room), valid for an hour.
    static var adminToken: String {
        AccessToken.sign(AccessClaims(sub: "bench", exp: Int64(Date().timeIntervalSince1970) + 3600, grants: Grants(admin: true)), key: key, secret: secret)
    }

    /// The server API's base, `http://HOST:PORT/v1`.
    var api: String { url.replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/v1/signal", with: "/v1") }

    /// Stops the server and removes its data (once; later calls do nothing).
    func stop() {
        guard !stopped else { return }
        stopped = true
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: data)
    }
}
