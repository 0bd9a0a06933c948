import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTransport

/// A real signaling server on an ephemeral loopback port with its own data directory.
public final class TestServer: Sendable {
    public static let key = "testkey"
    /// This server's signing secret, its own unless given: a token made for one test's server is
    /// refused by every other, so a client another test left reconnecting cannot sign in as one
    /// of this test's users (the tests of a process share ports over time).
    public let secret: String

    public let server: SignalingServer
    public let dataDirectory: String
    public let config: ServerConfig

    /// Starts a server; `configure` may change the configuration first. With a `clock` the
    /// server's wall time (token expiry, resume grace, room timers) moves only when the test says;
    /// with a `monotonic` clock, so does its monotonic time (hello and heartbeat timeouts, when a
    /// connection last heard its peer, and the media router's time: consent, overdue packets).
    public init(
        dataDirectory: String? = nil, secret: String? = nil, clock: ManualClock? = nil, monotonic: ManualClock? = nil, logger: Logger = Logger(label: "test-server", level: .error),
        configure: (inout ServerConfig) -> Void = { _ in }
    ) throws {
        let directory = dataDirectory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("majlis-test-\(UUID().uuidString)").path
        var config = ServerConfig()
        config.port = 0
        config.mediaPort = 0
        config.dataDirectory = directory
        let secret = secret ?? Self.newSecret()
        self.secret = secret
        config.keys = [Self.key: secret]
        // Server-side timers out of reach of a busy machine (a test of a timer sets its own).
        config.helloTimeout = 120
        configure(&config)
        self.config = config
        self.dataDirectory = directory
        server = try SignalingServer(config: config, logger: logger, clock: clock ?? SystemClock(), monotonic: monotonic)
        try server.start()
    }

    public var url: String { "ws://127.0.0.1:\(server.port)/v1/signal" }

    /// A random signing secret.
    public static func newSecret() -> String { HMACSHA256.randomSecret() }

    /// A token for `user` with `grants`, valid for `ttl` seconds, signed for this server.
    /// `issuedAt`: its `iat` (Unix seconds; default now).
    public func token(
        _ user: String, grants: Grants = Grants(create: true), room: String? = nil, ttl: Int64 = 3600, name: String? = nil, issuedAt: Int64? = nil
    ) -> String {
        Self.token(user, secret: secret, grants: grants, room: room, ttl: ttl, name: name, issuedAt: issuedAt)
    }

    /// A token signed with `secret` (for a server started another way, such as `majlis serve`).
    public static func token(
        _ user: String, secret: String, grants: Grants = Grants(create: true), room: String? = nil, ttl: Int64 = 3600, name: String? = nil,
        issuedAt: Int64? = nil
    ) -> String {
        let now = SystemClock().now() / 1000
        return AccessToken.sign(
            AccessClaims(sub: user, name: name ?? user.capitalized, exp: now + ttl, iat: issuedAt ?? now, room: room, grants: grants), key: key, secret: secret)
    }

    public func stop() { server.stop() }

    /// Stops the server and removes its data.
    public func destroy() {
        server.stop()
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }
}
