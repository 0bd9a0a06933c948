import Foundation
import MajlisProtocol
import MajlisRoom
import MajlisTransport

/// The webhook outbox: events written with the change that caused them, one delivery per
/// endpoint, handed out oldest first per room and endpoint.
extension Store {
    /// A delivery due now: the oldest one still pending for its room and endpoint.
    public struct PendingWebhook: Sendable, Equatable {
        /// The event's row (its order in the outbox).
        public var event: Int64
        public var endpoint: String
        public var eventId: String
        public var room: String
        public var body: String
        public var createdAt: Int64
        public var attempts: Int
        /// When this attempt became due (what `claimWebhook` compares).
        public var dueAt: Int64
    }

    /// An event and how its delivery to one endpoint stands, for operators.
    public struct WebhookRecord: Sendable, Encodable, Equatable {
        public var id: String
        public var type: String
        public var room: String
        public var seq: Int64
        public var createdAt: Int64
        public var endpoint: String
        /// `pending`, `delivered` or `failed` (given up after the retention time).
        public var state: String
        public var attempts: Int
        public var nextAttemptAt: Int64?
        public var deliveredAt: Int64?
        public var lastError: String?
        /// Where the next page starts (`after`).
        public var cursor: Int64
    }

    /// Writes what a room's change must store (`effects`, of the room as `state` has it) and the
    /// webhook events it caused (a delivery for each endpoint) in one transaction: either all of
    /// it is kept or none. With a `fence` (a node of a cluster), nothing is kept (`Fenced`) once
    /// another node has taken the room.
    public func commit(room: String, effects: [RoomEffect], state: StoredRoom, events: [WebhookEvent], endpoints: [String], fence: Int64? = nil) throws {
        try writing { db in
            try db.transaction {
                try Self.check(fence: fence, room: room, in: db)
                for effect in effects {
                    switch effect {
                    case .saveRoom: try Self.saveRoom(state, in: db)
                    case .saveBan(let user, let until): try Self.saveBan(room: room, user: user, until: until, in: db)
                    case .storeChat(let message, let clientMsgId): try Self.insertChat(room: room, message: message, clientMsgId: clientMsgId, in: db)
                    case .saveAttributes(let set, let deleted): try Self.saveAttributes(room: room, set: set, deleted: deleted, in: db)
                    case .storeGift(let gift, let key): try Self.insertGift(room: room, gift: gift, key: key, in: db)
                    case .deleteRoom: try Self.deleteRoom(room, in: db)
                    case .memberRemoved: break
                    }
                }
                try Self.insert(events, endpoints: endpoints, in: db)
            }
        }
    }

    /// Stores a new room and the events of its start in one transaction (refused, as `commit`
    /// is, once another node has taken a newer `fence`).
    public func createRoom(_ stored: StoredRoom, events: [WebhookEvent], endpoints: [String], fence: Int64? = nil) throws {
        try writing { db in
            try db.transaction {
                try Self.check(fence: fence, room: stored.id, in: db)
                try Self.saveRoom(stored, in: db)
                try Self.insert(events, endpoints: endpoints, in: db)
            }
        }
    }

    /// Writes `events` for `endpoints` on their own (events no other change carries, like a report).
    public func enqueueWebhooks(_ events: [WebhookEvent], endpoints: [String]) throws {
        try writing { db in try db.transaction { try Self.insert(events, endpoints: endpoints, in: db) } }
    }

    static func insert(_ events: [WebhookEvent], endpoints: [String], in db: any SQLDatabase) throws {
        guard !endpoints.isEmpty else { return }
        for event in events {
            let seq = try db.query(
                "INSERT INTO webhook_rooms (room, seq) VALUES (?, 1) ON CONFLICT (room) DO UPDATE SET seq = webhook_rooms.seq + 1 RETURNING seq",
                .text(event.room)
            ).first?.first?.int ?? 1
            let id = "ev_" + HMACSHA256.randomBytes(12).map { String(format: "%02x", $0) }.joined()
            let row = try db.query(
                "INSERT INTO webhook_events (event_id, room, seq, type, body, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                .text(id), .text(event.room), .int(seq), .text(event.type), .text(event.body(id: id, seq: seq)), .int(event.time)
            ).first?.first?.int ?? 0
            for endpoint in endpoints {
                try db.run(
                    "INSERT INTO webhook_deliveries (event, endpoint, room, state, next_attempt_at) VALUES (?, ?, ?, 'pending', ?)",
                    .int(row), .text(endpoint), .text(event.room), .int(event.time))
            }
        }
    }

    /// Deliveries to make now: for each room and endpoint only the oldest pending one, and only
    /// once its next attempt is due; none for a (endpoint, room) in `busy`. (The heads are found
    /// in one pass over the pending index: a subquery per pending row cost each pass time in
    /// proportion to the whole backlog, and every node of a cluster makes a pass per post.)
    public func dueWebhooks(now: Int64, limit: Int, busy: Set<String> = []) throws -> [PendingWebhook] {
        try withDatabase { db in
            let rows = try db.query(
                """
                SELECT d.event, d.endpoint, e.event_id, d.room, e.body, e.created_at, d.attempts, d.next_attempt_at
                FROM (SELECT endpoint, MIN(event) AS event FROM webhook_deliveries WHERE state = 'pending' GROUP BY endpoint, room) h
                JOIN webhook_deliveries d ON d.endpoint = h.endpoint AND d.event = h.event
                JOIN webhook_events e ON e.id = d.event
                WHERE d.next_attempt_at <= ?
                ORDER BY d.event LIMIT ?
                """, .int(now), .int(Int64(limit + busy.count)))
            return rows.compactMap { row -> PendingWebhook? in
                guard let event = row[0].int, let endpoint = row[1].text, let id = row[2].text, let room = row[3].text,
                    let body = row[4].text, let created = row[5].int, let attempts = row[6].int, let dueAt = row[7].int
                else { return nil }
                return PendingWebhook(
                    event: event, endpoint: endpoint, eventId: id, room: room, body: body, createdAt: created, attempts: Int(attempts), dueAt: dueAt)
            }.filter { !busy.contains(Self.webhookLane($0.endpoint, $0.room)) }.prefix(limit).map { $0 }
        }
    }

    /// Takes a due delivery for this process until `until` (Unix ms): true when no one else took
    /// it first. Nodes sharing one outbox each read the same due deliveries; the one whose claim
    /// lands posts it, and the others see it due only at `until` (a node that died while posting
    /// leaves it to be tried again then), so a lane never has two posts in flight.
    public func claimWebhook(_ delivery: PendingWebhook, until: Int64) throws -> Bool {
        try writing { db in
            try db.run(
                "UPDATE webhook_deliveries SET next_attempt_at = ? WHERE event = ? AND endpoint = ? AND state = 'pending' AND next_attempt_at = ?",
                .int(until), .int(delivery.event), .text(delivery.endpoint), .int(delivery.dueAt)) == 1
        }
    }

    /// The key of an (endpoint, room) pair: one delivery at a time each.
    public static func webhookLane(_ endpoint: String, _ room: String) -> String { endpoint + "\u{0}" + room }

    public func webhookDelivered(_ delivery: PendingWebhook, at time: Int64) throws {
        try writing { db in
            try db.run(
                "UPDATE webhook_deliveries SET state = 'delivered', delivered_at = ?, attempts = attempts + 1, last_error = NULL WHERE event = ? AND endpoint = ?",
                .int(time), .int(delivery.event), .text(delivery.endpoint))
        }
    }

    /// A failed attempt: tried again at `retryAt`, or given up (`failed`) when nil.
    public func webhookFailed(_ delivery: PendingWebhook, error: String, retryAt: Int64?) throws {
        try writing { db in
            try db.run(
                "UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE event = ? AND endpoint = ?",
                .text(retryAt == nil ? "failed" : "pending"), .int(retryAt ?? 0), .text(String(error.prefix(500))), .int(delivery.event),
                .text(delivery.endpoint))
        }
    }

    /// Deliveries not yet made.
    public func webhookQueueDepth() throws -> Int {
        try withDatabase { Int(try $0.query("SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'pending'").first?.first?.int ?? 0) }
    }

    /// Events with their delivery, oldest first after `after` (a cursor), of one state or any.
    public func webhookRecords(state: String?, room: String?, after: Int64?, limit: Int) throws -> [WebhookRecord] {
        try withDatabase { db in
            let rows = try db.query(
                """
                SELECT e.id, e.event_id, e.type, e.room, e.seq, e.created_at, d.endpoint, d.state, d.attempts, d.next_attempt_at,
                       d.delivered_at, d.last_error
                FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event
                WHERE e.id > ? AND (CAST(? AS TEXT) IS NULL OR d.state = ?) AND (CAST(? AS TEXT) IS NULL OR e.room = ?)
                ORDER BY e.id, d.endpoint LIMIT ?
                """, .int(after ?? 0), state.map(SQLValue.text) ?? .null, state.map(SQLValue.text) ?? .null,
                room.map(SQLValue.text) ?? .null, room.map(SQLValue.text) ?? .null, .int(Int64(limit)))
            return rows.compactMap { row in
                guard let cursor = row[0].int, let id = row[1].text, let type = row[2].text, let room = row[3].text, let seq = row[4].int,
                    let created = row[5].int, let endpoint = row[6].text, let state = row[7].text, let attempts = row[8].int
                else { return nil }
                return WebhookRecord(
                    id: id, type: type, room: room, seq: seq, createdAt: created, endpoint: endpoint, state: state, attempts: Int(attempts),
                    nextAttemptAt: state == "pending" ? row[9].int : nil, deliveredAt: row[10].int, lastError: row[11].text, cursor: cursor)
            }
        }
    }

    /// Sends an event again (to every endpoint), in its place in its room's order: the operator's
    /// replay. False when there is no such event.
    public func replayWebhook(_ eventId: String, now: Int64) throws -> Bool {
        try writing { db in
            try db.run(
                """
                UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, delivered_at = NULL
                WHERE event = (SELECT id FROM webhook_events WHERE event_id = ?)
                """, .int(now), .text(eventId)) > 0
        }
    }

    /// Forgets delivered and given-up events made before `before`; returns how many.
    @discardableResult
    public func pruneWebhooks(before: Int64) throws -> Int {
        try writing { db in
            try db.transaction {
                try db.run(
                    """
                    DELETE FROM webhook_events WHERE created_at < ? AND NOT EXISTS
                      (SELECT 1 FROM webhook_deliveries d WHERE d.event = webhook_events.id AND d.state = 'pending')
                    """, .int(before))
            }
        }
    }
}
