import MajlisProtocol

/// What keeps unwanted messages out: who blocks whom, and whether a user writing first to
/// another is a stranger to them (docs/protocol.md section 17: safety).
extension Store {
    /// What stands between a sender and the other user of a direct conversation.
    public struct Acquaintance: Sendable, Equatable {
        /// The sender blocks the other user, or the other user blocks the sender.
        public var blocks = false
        public var blocked = false
        /// Messages the sender has sent in their direct conversation, and whether the other
        /// user ever wrote back.
        public var sent = 0
        public var answered = false
        /// They are members of a group together.
        public var shareGroup = false

        public init(blocks: Bool = false, blocked: Bool = false, sent: Int = 0, answered: Bool = false, shareGroup: Bool = false) {
            self.blocks = blocks
            self.blocked = blocked
            self.sent = sent
            self.answered = answered
            self.shareGroup = shareGroup
        }
    }

    /// `user` blocks `other` (from `now`); whether it did not before.
    @discardableResult
    public func block(_ other: String, by user: String, now: Int64) throws -> Bool {
        try writing { db in
            try db.run("INSERT INTO blocks (\"user\", blocked, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", .text(user), .text(other), .int(now)) == 1
        }
    }

    /// `user` blocks `other` no more; whether it did.
    @discardableResult
    public func unblock(_ other: String, by user: String) throws -> Bool {
        try writing { db in try db.run("DELETE FROM blocks WHERE \"user\" = ? AND blocked = ?", .text(user), .text(other)) == 1 }
    }

    /// The users `user` blocks, by id.
    public func blocked(by user: String) throws -> [String] {
        try withDatabase { db in
            try db.query("SELECT blocked FROM blocks WHERE \"user\" = ? ORDER BY blocked", .text(user)).compactMap { $0.first?.text }
        }
    }

    /// The other member of direct conversation `id` for `user` (nil: not a direct conversation of theirs).
    public func peer(in id: String, of user: String) throws -> String? {
        try withDatabase { db in
            try db.query(
                "SELECT m.\"user\" FROM conversation_members m JOIN conversations c ON c.id = m.conversation WHERE m.conversation = ? AND c.kind = 'direct' AND m.\"user\" <> ?",
                .text(id), .text(user)
            ).first?.first?.text
        }
    }

    /// What stands between `sender` and `other`, whose direct conversation is `direct`.
    public func acquaintance(of sender: String, with other: String, direct: String) throws -> Acquaintance {
        try withDatabase { db in
            let blocks = try db.query("SELECT \"user\" FROM blocks WHERE (\"user\" = ? AND blocked = ?) OR (\"user\" = ? AND blocked = ?)",
                                      .text(sender), .text(other), .text(other), .text(sender)).compactMap { $0.first?.text }
            let sent = try db.query("SELECT COUNT(*) FROM messages WHERE conversation = ? AND sender = ?", .text(direct), .text(sender)).first?.first?.int ?? 0
            let answered = try !db.query("SELECT 1 FROM messages WHERE conversation = ? AND sender = ? LIMIT 1", .text(direct), .text(other)).isEmpty
            let shared = try !db.query(
                """
                SELECT 1 FROM conversation_members a JOIN conversation_members b ON b.conversation = a.conversation
                JOIN conversations c ON c.id = a.conversation WHERE a."user" = ? AND b."user" = ? AND c.kind = 'group' LIMIT 1
                """,
                .text(sender), .text(other)
            ).isEmpty
            return Acquaintance(blocks: blocks.contains(sender), blocked: blocks.contains(other), sent: Int(sent), answered: answered, shareGroup: shared)
        }
    }
}
