#if os(Linux)
import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTransport

/// A real Majlis server in this process on free loopback ports, with its media behind a
/// `NetworkSimulator` when an impairment is given: clients are told to send to the simulator,
/// so every leg (each client's uplink and downlink) crosses the impaired network.
public final class LabServer: Sendable {
    static let key = "lab"
    /// This server's own signing secret: a client another call left reconnecting cannot sign
    /// in to this one, should it come to listen on the same port.
    let secret = HMACSHA256.randomSecret()

    public let server: SignalingServer
    public let network: NetworkSimulator?
    private let dataDirectory: String

    /// `configure` may change the server's configuration before it starts.
    public init(impairment: NetworkSimulator.Settings? = nil, configure: (inout ServerConfig) -> Void = { _ in }) throws {
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-lab-\(UUID().uuidString)").path
        var made: (server: SignalingServer, network: NetworkSimulator?)?
        // Behind a simulator the media port is chosen before the server binds it: it was free a
        // moment ago, and should another socket have taken it since, the pair is made again.
        for attempt in 1...5 where made == nil {
            var config = ServerConfig()
            config.port = 0
            config.dataDirectory = dataDirectory
            config.keys = [Self.key: secret]
            var network: NetworkSimulator?
            if let impairment {
                let mediaPort = try Self.freeUDPPort()
                let simulator = try NetworkSimulator(host: "127.0.0.1", port: 0, upstream: UDPAddress(host: "127.0.0.1", port: mediaPort)!, settings: impairment)
                config.mediaHost = "127.0.0.1"
                config.mediaPort = mediaPort
                config.mediaAdvertise = "127.0.0.1:\(simulator.listener.port)"
                network = simulator
            } else {
                config.mediaPort = 0
            }
            configure(&config)
            do {
                made = (try SignalingServer(config: config, logger: Logger(label: "lab", level: .error)), network)
            } catch is MediaError where network != nil && attempt < 5 {
                network?.stop()
            }
        }
        guard let made else { throw MediaError.socket("no free media port") }
        (server, network) = made
        try server.start()
    }

    /// A UDP port that was free a moment ago.
    static func freeUDPPort() throws -> Int {
        let probe = try UDPSocket(host: "127.0.0.1", port: 0)
        defer { probe.close() }
        return probe.port
    }

    public var url: String { "ws://127.0.0.1:\(server.port)/v1/signal" }

    /// A token for `user` (create, join, publish, chat), valid for an hour, for this server.
    public func token(_ user: String) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        return AccessToken.sign(AccessClaims(sub: user, exp: now + 3600, iat: now, grants: Grants(create: true)), key: Self.key, secret: secret)
    }

    public func stop() {
        network?.stop()
        server.stop()
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }
}
#endif
