import MajlisProtocol
import MajlisRoom

/// What one change of a room asks of the store: the engine's effects, the room's state after
/// it, and the webhook events it caused, committed in one transaction (`Store.commit`). Pure:
/// made from the transition alone.
struct RoomWrite: Sendable {
    /// Whether webhook events are written, and with chat messages.
    struct Webhooks: Sendable {
        var on: Bool
        var includeChat: Bool
    }

    var effects: [RoomEffect]
    var state: StoredRoom
    var events: [WebhookEvent]

    /// The write for `outcome`, which took the room from `seatsBefore` to `after`; nil when it
    /// asks nothing of the store (a member leaving is not written, nor is a read).
    init?(room: String, outcome: RoomOutcome, after: RoomEngine, seatsBefore: [Seat], now: Int64, joined: Member? = nil, unbanned: String? = nil, webhooks: Webhooks) {
        var events: [WebhookEvent] = []
        if webhooks.on {
            events = RoomWebhooks.events(
                .init(room: room, now: now, joined: joined, seatsBefore: seatsBefore, seatsAfter: after.seats, outcome: outcome, unbanned: unbanned),
                includeChat: webhooks.includeChat)
        }
        let stores = outcome.effects.contains { if case .memberRemoved = $0 { false } else { true } }
        guard stores || !events.isEmpty else { return nil }
        effects = outcome.effects
        state = after.stored
        self.events = events
    }
}
