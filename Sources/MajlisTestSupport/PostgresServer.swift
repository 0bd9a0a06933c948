import Foundation

/// A throwaway PostgreSQL server for tests: its own cluster in a temporary folder, on a free
/// loopback port, trusting local connections as user `majlis`. Started on first use and stopped
/// when the test process exits; each test asks it for a fresh, empty database.
///
/// PostgreSQL refuses to run as root, so as root its programs run as the `postgres` user (made
/// by Debian's package) through `runuser`.
public final class PostgresServer: Sendable {
    /// Its folder (cluster, socket, log).
    public let directory: String
    public let port: Int
    private let binaries: String
    private let asPostgres: Bool

    /// The server every test of this process shares (nil when PostgreSQL is not installed).
    public static let shared: PostgresServer? = {
        let server = try? PostgresServer()
        if server != nil { atexit { PostgresServer.shared?.stop() } }
        return server
    }()

    /// Whether PostgreSQL's server programs are installed.
    public static var binaries: String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "\(root)/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: "\($0)/pg_ctl") }
    }

    /// Starts a server of its own (for a test that stops and starts it; others share `shared`).
    public init() throws {
        guard let binaries = Self.binaries else { throw TestClient.Timeout(description: "PostgreSQL is not installed (scripts/install-deps --test)") }
        self.binaries = binaries
        asPostgres = getuid() == 0
        directory = "/tmp/majlis-pg-\(getpid())-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if asPostgres { _ = try ChildProcess.run(["/usr/bin/chown", "postgres:postgres", directory]) }
        port = try LoopbackSocket.freePort()
        let initialized = try run(["\(binaries)/initdb", "-D", "\(directory)/data", "-A", "trust", "-U", "majlis", "-E", "UTF8", "--no-sync"])
        guard initialized == 0 else { throw TestClient.Timeout(description: "initdb failed (exit \(initialized))") }
        try start()
    }

    /// Starts the server (again, after `halt`), on the same port with the same data.
    public func start() throws {
        let options = "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        let started = try run(["\(binaries)/pg_ctl", "-D", "\(directory)/data", "-o", options, "-l", "\(directory)/log", "-w", "start"])
        guard started == 0 else { throw TestClient.Timeout(description: "PostgreSQL did not start (exit \(started)); see \(directory)/log") }
    }

    /// Stops the server as an outage would (connections cut), keeping its data for `start`.
    public func halt() throws {
        let status = try run(["\(binaries)/pg_ctl", "-D", "\(directory)/data", "-m", "fast", "-w", "stop"])
        guard status == 0 else { throw TestClient.Timeout(description: "PostgreSQL did not stop (exit \(status))") }
    }

    private func run(_ argv: [String]) throws -> Int32 {
        try ChildProcess.run(asPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + argv : argv, output: "\(directory)/commands.log")
    }

    /// The URL of the server's own `postgres` database.
    public var adminURL: String { "postgresql://majlis@127.0.0.1:\(port)/postgres" }

    /// A new, empty database; returns its URL.
    public func makeDatabase() throws -> String {
        let name = "t_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "_"))"
        let status = try ChildProcess.run(["/usr/bin/psql", "-q", "-v", "ON_ERROR_STOP=1", adminURL, "-c", "CREATE DATABASE \(name)"], output: "\(directory)/psql.log")
        guard status == 0 else { throw TestClient.Timeout(description: "cannot create database \(name) (exit \(status))") }
        return "postgresql://majlis@127.0.0.1:\(port)/\(name)"
    }

    /// Stops the server (immediately: its data is throwaway) and removes its folder.
    public func stop() {
        _ = try? run(["\(binaries)/pg_ctl", "-D", "\(directory)/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }
}
