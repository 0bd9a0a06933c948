import Foundation

/// Moving a store: everything durable copied, as it is, into another (empty) store. An operator
/// who outgrows one machine moves its SQLite data directory into PostgreSQL this way
/// (`majlis migrate`), and back.
extension Store {
    /// The tables and their columns, in an order that keeps references whole.
    static let copiedTables: [(name: String, columns: String)] = [
        ("rooms", "id, owner, created_at, data"),
        ("bans", #"room, "user", until"#),
        ("chat", "room, msg_id, sender, sender_name, type, text, payload, ts, client_msg_id"),
        ("request_replies", #""user", rid, at, ok, body"#),
        ("attributes", "room, key, value, owner"),
        ("webhook_rooms", "room, seq"),
        ("webhook_events", "id, event_id, room, seq, type, body, created_at"),
        ("webhook_deliveries", "event, endpoint, room, state, attempts, next_attempt_at, delivered_at, last_error"),
        ("conversations", "id, kind, title, owner, created_at, last_seq, last_ts, access, about, terms"),
        ("conversation_members", #"conversation, "user", role, joined_at, read_seq, muted, pinned, muted_until"#),
        ("messages", "conversation, seq, sender, sender_name, type, text, payload, fallback, reply_to, mentions, ts, client_msg_id, edited_at, revoked_by, featured_at"),
        ("conversation_requests", #"conversation, "user", name, note, at"#),
        ("session_revocations", #""user", revoked_at, reason"#),
        ("user_presence", #""user", share, last_seen"#),
        ("packs", "sha256, id, kind, manifest, size, data, created_at, replaced_at"),
        ("blocks", #""user", blocked, at"#),
        ("held_messages", "id, conversation, sender, sender_name, recipient, type, text, payload, fallback, reply_to, mentions, client_msg_id, at"),
        ("uploads", "id, owner, length, received, mime, metadata, created_at, expires_at, completed_at"),
        ("upload_chunks", "upload, start, size, data"),
        ("media_links", "media, conversation"),
        ("gifts", "room, key, giver, receiver, seat, pack, item, count, ts"),
        ("log_requests", #"id, "user", since, until, reason, asked_at, media, delivered_at"#),
    ]

    /// Copies everything this store holds into `target`, which must hold nothing yet, in one
    /// transaction on each side (a consistent copy; either all of it arrives or nothing), and
    /// checks every table arrived whole. Returns how many rows each table had.
    @discardableResult
    public func copy(to target: Store) throws -> [(table: String, rows: Int)] {
        guard target !== self else { throw SQLFailure(description: "a store cannot be copied into itself") }
        return try withDatabase { source in
            try target.writing { destination in
                for (table, _) in Self.copiedTables {
                    let held = try destination.query("SELECT COUNT(*) FROM \(table)").first?.first?.int ?? 0
                    guard held == 0 else { throw SQLFailure(description: "\(target.path) is not empty (\(table) holds \(held) rows); copy into an empty database") }
                }
                // One side waits on the other for as long as a table takes to read or write: no
                // idle limit on a copy's transactions (a node's own last a few milliseconds).
                let sides = [source, destination].filter { $0.dialect == .postgres }
                for side in sides { try side.execute("SET idle_in_transaction_session_timeout = 0") }
                defer { for side in sides { try? side.execute("RESET idle_in_transaction_session_timeout") } }
                return try source.transaction {
                    try destination.transaction {
                        var counts: [(String, Int)] = []
                        for (table, columns) in Self.copiedTables {
                            let rows = try source.query("SELECT \(columns) FROM \(table)")
                            let slots = Array(repeating: "?", count: columns.split(separator: ",").count).joined(separator: ", ")
                            for row in rows { try destination.run("INSERT INTO \(table) (\(columns)) VALUES (\(slots))", row) }
                            let arrived = try destination.query("SELECT COUNT(*) FROM \(table)").first?.first?.int ?? 0
                            guard arrived == rows.count else {
                                throw SQLFailure(description: "\(table): \(rows.count) rows read, \(arrived) arrived")
                            }
                            counts.append((table, rows.count))
                        }
                        // The search index is each store's own kind: made anew from the messages.
                        try Self.indexStoredMessages(in: destination)
                        // Events written from now on are numbered after the copied ones.
                        if destination.dialect == .postgres {
                            try destination.execute(
                                "SELECT setval(pg_get_serial_sequence('webhook_events', 'id'), COALESCE((SELECT MAX(id) FROM webhook_events), 0) + 1, false)")
                        }
                        return counts
                    }
                }
            }
        }
    }
}
