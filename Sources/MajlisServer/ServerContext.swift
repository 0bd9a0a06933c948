import Foundation
import MajlisProtocol
import MajlisTransport

/// What every part of the server shares: configuration, store, presence, rooms, media, the web
/// app, log and clock.
final class ServerContext: Sendable {
    let config: ServerConfig
    let store: Store
    let presence = PresenceDirectory()
    /// The items of the resource packs kept, for `seat.emoji`.
    let packIndex = PackIndex()
    let logger: Logger
    /// Wall time (Unix milliseconds).
    let clock: any MillisecondClock
    let rooms: RoomRegistry
    let media: MediaRouter
    let web: WebApp
    let metrics = ServerMetrics()
    /// Posts webhooks; nil when no endpoint is configured (then no events are kept).
    let webhooks: WebhookDispatcher?
    /// This node's id, addresses and load.
    let node: NodeStatus
    /// The cluster's registry of nodes, and this node's leases on its rooms; nil for a server
    /// on its own (no Redis).
    let registry: NodeRegistry?
    let leases: RoomLeases?
    /// Carries messaging events to the cluster's other nodes; nil on a server on its own.
    let messagingBus: MessagingBus?
    /// What this cluster's nodes sign what they tell each other with (their registry entries,
    /// their relay statements).
    let seal: ClusterSeal

    init(config: ServerConfig, store: Store, media: MediaRouter, redis: RedisClient?, logger: Logger, clock: any MillisecondClock) {
        self.config = config
        self.store = store
        self.media = media
        web = WebApp(config: config)
        self.logger = logger
        self.clock = clock
        self.rooms = RoomRegistry()
        let node = NodeStatus(id: config.node, startedAt: clock.now())
        self.node = node
        let seal = config.clusterSecret.map { ClusterSeal(secret: $0) } ?? .derived(from: config.keys)
        self.seal = seal
        let registry = redis.map { NodeRegistry(redis: $0, id: config.node, instance: node.instance, seal: seal, logger: logger) }
        self.registry = registry
        if let redis, let registry {
            leases = RoomLeases(
                bus: RedisLeaseBus(redis: redis, registryLifetime: registry.lifetime), node: config.node, instance: node.instance,
                known: { registry.lastKnown }, freshWithin: 2 * registry.interval, store: store, logger: logger, lookup: { registry.entry(of: $0) })
        } else {
            leases = nil
        }
        if let redis, let url = config.redisURL, let reader = try? RedisClient(url: url) {
            let presence = presence
            messagingBus = MessagingBus(
                writer: redis, reader: reader, seal: seal, node: config.node, logger: logger,
                deliver: { users, frame in WebSocketConnection.send(frame, to: presence.sessions(of: users).map(\.connection), urgent: false) },
                end: { ending in ending.carryOut(on: presence) })
        } else {
            messagingBus = nil
        }
        let settings = config.webhooks
        let keyId = settings.key ?? config.keys.keys.sorted().first
        if settings.enabled, let keyId, let secret = config.keys[keyId] {
            webhooks = WebhookDispatcher(store: store, settings: settings, key: (keyId, secret), logger: logger, metrics: metrics, clock: clock)
        } else {
            webhooks = nil
        }
    }

    /// The endpoints events are kept for (none without webhooks).
    var webhookEndpoints: [String] { webhooks?.endpoints ?? [] }

    /// The live nodes of the cluster (this one alone without Redis).
    func nodes() throws -> [NodeInfo] {
        guard let registry else { return [node.report(self)] }
        return try registry.nodes()
    }

    /// Unix milliseconds now.
    func now() -> Int64 { clock.now() }
}
