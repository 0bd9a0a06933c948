import MajlisProtocol

/// Finding messages by their words (`msg.search`): each message's terms (`SearchTerms`) in
/// `message_search`, an FTS5 table in SQLite and a `tsvector` with a GIN index in PostgreSQL,
/// written in the transaction that stores, edits, revokes or deletes the message.
extension Store {
    /// What a message is found by: its text, and a card's fallback.
    private static func searchable(_ message: ConversationMessage) -> String {
        [message.text, message.fallback].compactMap { $0 }.joined(separator: " ")
    }

    /// Indexes `message` (one not revoked, with words in it).
    static func index(_ message: ConversationMessage, in db: any SQLDatabase) throws {
        guard message.revokedBy == nil else { return }
        let terms = SearchTerms.index(searchable(message))
        guard !terms.isEmpty else { return }
        switch db.dialect {
        case .sqlite:
            try db.run(
                "INSERT INTO message_search (terms, conversation, seq) VALUES (?, ?, ?)", .text(terms), .text(message.conversation), .int(message.seq))
        case .postgres:
            try db.run(
                "INSERT INTO message_search (conversation, seq, terms) VALUES (?, ?, to_tsvector('simple', ?)) ON CONFLICT DO NOTHING",
                .text(message.conversation), .int(message.seq), .text(terms))
        }
    }

    static func unindex(_ seq: Int64, in id: String, db: any SQLDatabase) throws {
        try db.run("DELETE FROM message_search WHERE conversation = ? AND seq = ?", .text(id), .int(seq))
    }

    /// Indexes every message stored before the index existed (the migration that made it).
    static func indexStoredMessages(in db: any SQLDatabase) throws {
        var conversation = "", seq: Int64 = 0
        while true {
            let rows = try db.query(
                "SELECT conversation, \(messageColumns) FROM messages WHERE conversation > ? OR (conversation = ? AND seq > ?) ORDER BY conversation, seq LIMIT 500",
                .text(conversation), .text(conversation), .int(seq))
            guard !rows.isEmpty else { return }
            for row in rows {
                conversation = row[0].text ?? ""
                guard let message = message(row, at: 1, conversation: conversation) else { continue }
                seq = message.seq
                try index(message, in: db)
            }
        }
    }

    /// Where a page of found messages ends: they come newest first, then by conversation, then
    /// by `seq` from the newest, so one position is before or after any other message.
    public struct SearchPosition: Sendable, Equatable, CustomStringConvertible {
        public var ts: Int64
        public var conversation: String
        public var seq: Int64

        public init(_ message: ConversationMessage) {
            (ts, conversation, seq) = (message.ts, message.conversation, message.seq)
        }

        /// Reads a position as `description` wrote it (`ts.seq.conversation`).
        public init?(_ text: String) {
            let parts = text.split(separator: ".", maxSplits: 2).map(String.init)
            guard parts.count == 3, let ts = Int64(parts[0]), let seq = Int64(parts[1]), !parts[2].isEmpty else { return nil }
            (self.ts, self.seq, conversation) = (ts, seq, parts[2])
        }

        public var description: String { "\(ts).\(seq).\(conversation)" }
    }

    /// Up to `limit` messages of `user`'s conversations (of `conversation` only, if given) with
    /// every word of `query` (`SearchTerms.query`), newest first, after position `after`.
    /// Revoked messages are not found.
    public func search(_ query: String, for user: String, in conversation: String? = nil, after: SearchPosition? = nil, limit: Int) throws -> [ConversationMessage] {
        let terms = SearchTerms.query(query)
        guard !terms.isEmpty else { return [] }
        return try withDatabase { db in
            // Terms are letters and digits only: quoted, none can be an operator of either store.
            var conditions: [String], values: [SQLValue] = [.text(user)]
            switch db.dialect {
            case .sqlite:
                conditions = ["message_search MATCH ?"]
                values.append(.text(terms.map { "\"\($0.text)\"" + ($0.prefix ? "*" : "") }.joined(separator: " ")))
            case .postgres:
                conditions = ["s.terms @@ to_tsquery('simple', ?)"]
                values.append(.text(terms.map { "'\($0.text)'" + ($0.prefix ? ":*" : "") }.joined(separator: " & ")))
            }
            if let conversation {
                conditions.append("s.conversation = ?")
                values.append(.text(conversation))
            }
            if let after {
                conditions.append("(m.ts < ? OR (m.ts = ? AND (m.conversation > ? OR (m.conversation = ? AND m.seq < ?))))")
                values += [.int(after.ts), .int(after.ts), .text(after.conversation), .text(after.conversation), .int(after.seq)]
            }
            values.append(.int(Int64(limit)))
            let rows = try db.query(
                """
                SELECT m.conversation, \(Self.messageColumns(of: "m")) FROM message_search s
                JOIN messages m ON m.conversation = s.conversation AND m.seq = s.seq
                JOIN conversation_members cm ON cm.conversation = m.conversation AND cm."user" = ?
                WHERE \(conditions.joined(separator: " AND ")) ORDER BY m.ts DESC, m.conversation, m.seq DESC LIMIT ?
                """, values)
            return rows.compactMap { Self.message($0, at: 1, conversation: $0[0].text ?? "") }
        }
    }
}
