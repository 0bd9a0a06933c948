import Foundation
import MajlisTransport

extension SignalingServer {
    /// `GET /metrics`: the server's state and counters in the Prometheus text format.
    func metrics() -> String {
        var page = PrometheusText()
        let hosts = context.rooms.all
        page.gauge(
            "majlis_node_info", "This node: its id (--node) and version, as labels (1 while it runs).", 1,
            labels: [("node", context.config.node), ("version", Self.version)])
        page.gauge("majlis_connections", "Open WebSocket connections.", Double(connectionCount))
        page.gauge("majlis_rooms_loaded", "Rooms in memory (rooms with members, and idle ones not yet unloaded).", Double(hosts.count))
        page.gauge("majlis_room_members", "Members in loaded rooms, connected or waiting to resume.", Double(hosts.reduce(0) { $0 + $1.memberCount }))
        page.gauge("majlis_seats_taken", "Seats taken in loaded rooms.", Double(hosts.reduce(0) { $0 + $1.seatedCount }))

        let metrics = context.metrics
        let results = metrics.opResults.sorted { $0.key < $1.key }.flatMap { op, results in
            results.sorted { $0.key < $1.key }.map { ([("op", op), ("result", $0.key)], Double($0.value)) }
        }
        page.counter("majlis_ops_total", "Requests answered, by op and result (ok, or the error code).", results)
        page.histogram(
            "majlis_op_duration_seconds", "From a request's arrival to its answer, by op.",
            metrics.opLatencies.sorted { $0.key < $1.key }.map { ([("op", $0.key)], $0.value) })
        let counted = metrics.counted
        let counters: [(ServerMetrics.Counter, String)] = [
            (.chatMessages, "Chat messages posted."), (.conversationMessages, "Messages posted in conversations (outside rooms)."),
            (.loginsRejected, "hello requests refused (bad, expired or unknown tokens)."),
            (.kicks, "Members kicked out of rooms."), (.bans, "Bans placed."), (.apiRequests, "Server API requests."),
            (.webhookAttemptsFailed, "Webhook posts that failed (each is retried)."),
            (.webhooksGivenUp, "Webhook deliveries given up after the retention time."),
            (.webhooksLost, "Webhook events that could not be written to the outbox (the store failed)."),
        ]
        for (counter, help) in counters {
            page.counter("majlis_\(counter.rawValue)_total", help, [([], Double(counted[counter] ?? 0))])
        }
        let delays = writeDelays
        page.histogram(
            "majlis_signaling_write_delay_seconds", "From the arrival of the request behind a message to its write on the socket.",
            [([("kind", "answer")], delays.answers), ([("kind", "event")], delays.events)])
        page.histogram(
            "majlis_room_queue_wait_seconds", "From a room op's arrival to the start of its work on its room's queue.",
            [([], metrics.roomQueueWaits)])

        let media = context.media.counted
        page.counter("majlis_media_packets_forwarded_total", "Media packets forwarded (one per listener).", [([], Double(media.forwarded))])
        page.counter(
            "majlis_media_packets_dropped_total", "Media packets dropped, by reason.",
            [
                ([("reason", "not_allowed")], Double(media.droppedNotAllowed)), ([("reason", "unbound")], Double(media.droppedUnbound)),
                ([("reason", "bad_packet")], Double(media.droppedBadPacket)), ([("reason", "unsupported")], Double(media.droppedUnsupported)),
                ([("reason", "over_budget")], Double(media.droppedOverBudget)),
            ])
        page.counter("majlis_media_packets_retransmitted_total", "Packets sent again on a listener's NACK.", [([], Double(media.retransmitted))])
        page.counter("majlis_media_nacks_sent_total", "NACKs sent to speakers.", [([], Double(media.nacksSent))])
        page.counter(
            "majlis_media_recovered_from_redundancy_total", "Frames a speaker's uplink lost, rebuilt from redundant copies and sent on.",
            [([], Double(media.recoveredFromRedundancy))])
        page.counter("majlis_media_estimates_sent_total", "Uplink estimates (REMB) sent to speakers.", [([], Double(media.estimatesSent))])
        page.counter("majlis_media_repairs_refused_total", "Retransmissions refused because the listener's budget was spent.", [([], Double(media.repairsRefused))])
        page.counter("majlis_media_dtls_failures_total", "Browsers whose DTLS handshake failed.", [([], Double(media.dtlsFailures))])
        if let leases = context.leases {
            let counted = leases.counted.withLock { $0 }
            page.gauge("majlis_cluster_rooms_held", "Rooms this node holds a lease on.", Double(leases.held))
            page.counter("majlis_cluster_rooms_lost_total", "Rooms this node stopped serving because another node took them.", [([], Double(counted.lost))])
            page.counter(
                "majlis_cluster_writes_fenced_total", "Writes for a room the store refused because another node had taken it since.",
                [([], Double(counted.fenced))])
        }
        if let registry = context.registry {
            page.counter(
                "majlis_cluster_entries_refused_total", "Registry entries read that no node of this cluster signed (ignored), each time read.",
                [([], Double(registry.refused.load(ordering: .relaxed)))])
        }
        page.histogram("majlis_media_forwarding_seconds", "From a media packet's arrival to its send, per copy.", latency: context.media.forwardingHistogram)
        let legs = context.media.legs
        page.histogram(
            "majlis_media_leg_loss_ratio", "Worst packet loss of each member's leg per two-second interval.",
            [([("direction", "up")], legs.upLoss), ([("direction", "down")], legs.downLoss)])
        page.histogram(
            "majlis_media_leg_jitter_seconds", "Worst jitter of each member's leg per two-second interval.",
            [([("direction", "up")], legs.upJitter), ([("direction", "down")], legs.downJitter)])

        page.gauge("majlis_webhook_queue_depth", "Webhook deliveries not yet made.", Double((try? context.store.webhookQueueDepth()) ?? 0))
        page.histogram("majlis_webhook_delivery_seconds", "From an event to its delivery (a 2xx from the endpoint).", [([], metrics.webhookDelivery)])
        page.histogram("majlis_store_write_seconds", "SQLite writes, lock wait included.", [([], context.store.writeDelays)])
        return page.text
    }
}
