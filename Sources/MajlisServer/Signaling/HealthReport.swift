import MajlisTransport

/// `GET /healthz`: the node's state, connections, media and signaling delays.
struct HealthReport: Encodable {
    struct Media: Encodable {
        var forwarded: Int
        var dropped: Int
        var retransmitted: Int
        /// Receive to send of forwarded packets since the start, microseconds.
        var forwardLatencyP50: Int
        var forwardLatencyP99: Int
        var forwardLatencyMax: Int
        /// Whether the forwarding thread runs at real-time priority now.
        var realtime: Bool
    }

    struct Delays: Encodable {
        /// Microseconds, since the start.
        var p50: Int
        var p99: Int
        var histogram: DelayHistogram

        init(_ histogram: DelayHistogram) {
            p50 = histogram.percentile(0.5)
            p99 = histogram.percentile(0.99)
            self.histogram = histogram
        }
    }

    struct Signaling: Encodable {
        /// From a request's arrival to the write of its answer, and of each event it caused.
        var answers: Delays
        var events: Delays
        /// From a room op's arrival to the start of its work on the room's queue.
        var queued: Delays
    }

    struct Cluster: Encodable {
        var registry: String
        var roomsHeld: Int
    }

    /// "ok", or "degraded" while the store fails (rooms in memory go on; what needs the store is refused).
    var status: String
    var version = SignalingServer.version
    var node: String
    /// "ok", or what the store's last use or check (every five seconds) failed with.
    var store: String
    var rooms: Int
    var connections: Int
    var media: Media
    var signaling: Signaling
    /// A node of a cluster: whether its last report reached the registry, and the rooms it holds.
    var cluster: Cluster?

    /// The report now, with the open connections and the signaling write delays since the start.
    init(context: ServerContext, connections: Int, writeDelays delays: (answers: DelayHistogram, events: DelayHistogram)) {
        let counted = context.media.counted
        let latency = context.media.forwardingLatency
        media = Media(
            forwarded: counted.forwarded, dropped: counted.droppedBadPacket + counted.droppedUnbound + counted.droppedNotAllowed,
            retransmitted: counted.retransmitted, forwardLatencyP50: latency.p50, forwardLatencyP99: latency.p99, forwardLatencyMax: latency.max,
            realtime: context.media.isRealtime)
        let storeFailure = context.store.failing
        status = storeFailure == nil ? "ok" : "degraded"
        node = context.config.node
        store = storeFailure ?? "ok"
        rooms = context.rooms.count
        self.connections = connections
        signaling = Signaling(answers: Delays(delays.answers), events: Delays(delays.events), queued: Delays(context.metrics.roomQueueWaits))
        cluster = context.registry.map { Cluster(registry: $0.reachable ? "ok" : "unreachable", roomsHeld: context.leases?.held ?? 0) }
    }
}
