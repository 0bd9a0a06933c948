import Foundation
import MajlisProtocol

/// Conversations, their members and their messages (docs/protocol.md section 17). A message's
/// `seq` comes from its conversation's row, taken in the transaction that stores the message,
/// so that the numbers have no gaps and two nodes sending to one conversation take turns.
extension Store {
    /// A member's place in a conversation.
    public struct Membership: Sendable, Equatable {
        public var kind: ConversationKind
        public var role: Role
        public var readSeq: Int64
        public var lastSeq: Int64
        /// Until when (Unix ms) the group's owner or an admin keeps the member from sending.
        public var mutedUntil: Int64 = 0
    }

    /// What became of a message to post.
    public enum Posting: Sendable, Equatable {
        /// Stored now, as `seq`; `members`: the conversation's members then (read in the same
        /// transaction, so that a store lost once it committed cannot lose the delivery).
        case posted(ConversationMessage, members: [String])
        /// The sender posted this `clientMsgId` in the conversation before: the message it became.
        case duplicate(ConversationMessage)
        /// The sender is not a member of the conversation (or it does not exist).
        case notMember
    }

    /// Another transaction stored the same client message id while this one ran.
    private struct StoredMeanwhile: Error {}

    /// The columns a message is read from, in `message(_:at:)`'s order.
    static let messageColumns = "seq, sender, sender_name, type, text, payload, fallback, reply_to, mentions, ts, client_msg_id, edited_at, revoked_by, featured_at"

    /// `messageColumns` of the table named `alias` in a query.
    static func messageColumns(of alias: String) -> String {
        messageColumns.split(separator: ",").map { alias + "." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
    }

    static func message(_ row: [SQLValue], at start: Int, conversation: String) -> ConversationMessage? {
        guard let seq = row[start].int else { return nil }
        let mentions = row[start + 8].text.map { $0.split(separator: " ").map(String.init) }
        return ConversationMessage(
            conversation: conversation, seq: seq, from: UserRef(id: row[start + 1].text ?? "", name: row[start + 2].text ?? ""),
            type: row[start + 3].text ?? "text", text: row[start + 4].text, payload: row[start + 5].text.flatMap { try? JSONParser().parse($0) },
            fallback: row[start + 6].text, replyTo: row[start + 7].int, mentions: mentions, ts: row[start + 9].int ?? 0,
            clientMsgId: row[start + 10].text ?? "", editedAt: row[start + 11].int, revokedBy: row[start + 12].text, featuredAt: row[start + 13].int)
    }

    private static func role(_ value: SQLValue) -> Role { value.text.flatMap(Role.init(rawValue:)) ?? .member }

    // MARK: Conversations

    /// Creates group `id` owned by `owner`, with `members` beside the owner.
    public func createGroup(
        _ id: String, title: String, owner: String, members: [String], access: GroupAccess = .private, about: String? = nil, now: Int64
    ) throws {
        try writing { db in
            try db.transaction {
                try db.run(
                    "INSERT INTO conversations (id, kind, title, owner, created_at, last_seq, last_ts, access, about, terms) VALUES (?, 'group', ?, ?, ?, 0, ?, ?, ?, ?)",
                    .text(id), .text(title), .text(owner), .int(now), .int(now), .text(access.rawValue), about.map(SQLValue.text) ?? .null,
                    .text(SearchTerms.index(title + " " + (about ?? ""))))
                try Self.addMember(id, user: owner, role: .owner, readSeq: 0, now: now, in: db)
                for user in members where user != owner { try Self.addMember(id, user: user, role: .member, readSeq: 0, now: now, in: db) }
            }
        }
    }

    private static func addMember(_ id: String, user: String, role: Role, readSeq: Int64, now: Int64, in db: any SQLDatabase) throws {
        try db.run(
            "INSERT INTO conversation_members (conversation, \"user\", role, joined_at, read_seq) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            .text(id), .text(user), .text(role.rawValue), .int(now), .int(readSeq))
    }

    /// `user`'s membership of conversation `id` (nil: not a member, or no such conversation).
    public func membership(_ id: String, user: String) throws -> Membership? {
        try withDatabase { db in try Self.membership(id, user: user, in: db) }
    }

    private static func membership(_ id: String, user: String, in db: any SQLDatabase) throws -> Membership? {
        guard let row = try db.query(
            "SELECT c.kind, m.role, m.read_seq, c.last_seq, m.muted_until FROM conversation_members m JOIN conversations c ON c.id = m.conversation WHERE m.conversation = ? AND m.\"user\" = ?",
            .text(id), .text(user)
        ).first else { return nil }
        return Membership(
            kind: row[0].text.flatMap(ConversationKind.init(rawValue:)) ?? .group, role: role(row[1]), readSeq: row[2].int ?? 0, lastSeq: row[3].int ?? 0,
            mutedUntil: row[4].int ?? 0)
    }

    /// The user ids of conversation `id`'s members.
    public func memberIds(of id: String) throws -> [String] {
        try withDatabase { db in try Self.memberIds(of: id, in: db) }
    }

    private static func memberIds(of id: String, in db: any SQLDatabase) throws -> [String] {
        try db.query("SELECT \"user\" FROM conversation_members WHERE conversation = ? ORDER BY \"user\"", .text(id)).compactMap { $0.first?.text }
    }

    /// Conversation `id`'s members, by user id.
    public func members(of id: String) throws -> [ConversationMember] {
        try withDatabase { db in
            try db.query(
                "SELECT \"user\", role, read_seq, joined_at, muted_until FROM conversation_members WHERE conversation = ? ORDER BY \"user\"", .text(id)
            ).map { row in
                ConversationMember(
                    user: row[0].text ?? "", role: Self.role(row[1]), readSeq: row[2].int ?? 0, joinedAt: row[3].int ?? 0,
                    mutedUntil: (row[4].int ?? 0) > 0 ? row[4].int : nil)
            }
        }
    }

    /// Adds `users` to conversation `id` as members who have read nothing before now (they see
    /// its messages from the newest on); returns those who were not members before.
    public func addMembers(_ id: String, users: [String], now: Int64) throws -> [String] {
        try writing { db in
            try db.transaction {
                let lastSeq = try db.query("SELECT last_seq FROM conversations WHERE id = ?", .text(id)).first?.first?.int ?? 0
                var added: [String] = []
                for user in users where try Self.membership(id, user: user, in: db) == nil {
                    try Self.addMember(id, user: user, role: .member, readSeq: lastSeq, now: now, in: db)
                    added.append(user)
                }
                return added
            }
        }
    }

    /// Removes `user` from conversation `id`; whether it was a member.
    @discardableResult
    public func removeMember(_ id: String, user: String) throws -> Bool {
        try writing { db in
            try db.run("DELETE FROM conversation_members WHERE conversation = ? AND \"user\" = ?", .text(id), .text(user)) == 1
        }
    }

    /// How many members conversation `id` has.
    public func memberCount(of id: String) throws -> Int {
        try withDatabase { db in
            Int(try db.query("SELECT COUNT(*) FROM conversation_members WHERE conversation = ?", .text(id)).first?.first?.int ?? 0)
        }
    }

    public func setRole(_ id: String, user: String, role: Role) throws {
        try writing { db in
            _ = try db.run("UPDATE conversation_members SET role = ? WHERE conversation = ? AND \"user\" = ?", .text(role.rawValue), .text(id), .text(user))
        }
    }

    /// Hands group `id` to `user` (the owner leaving): `user` becomes its owner.
    public func setOwner(_ id: String, user: String) throws {
        try writing { db in
            try db.transaction {
                try db.run("UPDATE conversations SET owner = ? WHERE id = ?", .text(user), .text(id))
                try db.run("UPDATE conversation_members SET role = 'owner' WHERE conversation = ? AND \"user\" = ?", .text(id), .text(user))
            }
        }
    }

    /// Group `id` takes what is given of a title, an about and an access; its terms (what
    /// `conv.discover` finds it by) follow.
    public func updateGroup(_ id: String, title: String?, about: String?, access: GroupAccess?) throws {
        try writing { db in
            try db.transaction {
                guard let row = try db.query("SELECT title, about, access FROM conversations WHERE id = ?", .text(id)).first else { return }
                let newTitle = title ?? row[0].text ?? "", newAbout = about ?? row[1].text
                try db.run(
                    "UPDATE conversations SET title = ?, about = ?, access = ?, terms = ? WHERE id = ?", .text(newTitle), newAbout.map(SQLValue.text) ?? .null,
                    .text(access?.rawValue ?? row[2].text ?? "private"), .text(SearchTerms.index(newTitle + " " + (newAbout ?? ""))), .text(id))
            }
        }
    }

    /// A member's own settings of conversation `id`; those not given stay.
    public func setSettings(_ id: String, user: String, muted: Bool?, pinned: Bool?) throws {
        try writing { db in
            if let muted {
                try db.run("UPDATE conversation_members SET muted = ? WHERE conversation = ? AND \"user\" = ?", .int(muted ? 1 : 0), .text(id), .text(user))
            }
            if let pinned {
                try db.run("UPDATE conversation_members SET pinned = ? WHERE conversation = ? AND \"user\" = ?", .int(pinned ? 1 : 0), .text(id), .text(user))
            }
        }
    }

    /// Deletes conversation `id` with its members and messages (its last member left).
    public func deleteConversation(_ id: String) throws {
        try writing { db in
            try db.transaction {
                try db.run("DELETE FROM messages WHERE conversation = ?", .text(id))
                try db.run("DELETE FROM message_search WHERE conversation = ?", .text(id))
                try db.run("DELETE FROM conversation_members WHERE conversation = ?", .text(id))
                try db.run("DELETE FROM conversation_requests WHERE conversation = ?", .text(id))
                try db.run("DELETE FROM conversations WHERE id = ?", .text(id))
            }
        }
    }

    /// Conversation `id` as the app's backend sees it: no member's own marks (nil: no such conversation).
    public func conversationInfo(_ id: String) throws -> ConversationInfo? {
        try withDatabase { db in
            guard let row = try db.query(
                "SELECT kind, title, owner, created_at, last_seq, last_ts, (SELECT COUNT(*) FROM conversation_members WHERE conversation = ?), access, about FROM conversations WHERE id = ?",
                .text(id), .text(id)
            ).first else { return nil }
            let kind = row[0].text.flatMap(ConversationKind.init(rawValue:)) ?? .group
            let createdAt = row[3].int ?? 0
            return ConversationInfo(
                id: id, kind: kind, title: kind == .group ? row[1].text : nil, owner: kind == .group ? row[2].text : nil, memberCount: Int(row[6].int ?? 0),
                lastSeq: row[4].int ?? 0, createdAt: createdAt, updatedAt: max(createdAt, row[5].int ?? 0),
                access: kind == .group ? row[7].text.flatMap(GroupAccess.init(rawValue:)) : nil, about: kind == .group ? row[8].text : nil)
        }
    }

    /// `user`'s conversations by id after `after`, at most `limit`, as `user` sees them.
    public func conversations(of user: String, after: String?, limit: Int) throws -> [ConversationSummary] {
        try summaries(user: user, where: "c.id > ?", .text(after ?? ""), limit: limit)
    }

    /// Messages `user` has not read, across the conversations it has not muted.
    public func totalUnread(of user: String) throws -> Int64 {
        try withDatabase { db in
            try db.query(
                "SELECT CAST(COALESCE(SUM(c.last_seq - m.read_seq), 0) AS BIGINT) FROM conversation_members m JOIN conversations c ON c.id = m.conversation WHERE m.\"user\" = ? AND m.muted = 0",
                .text(user)
            ).first?.first?.int ?? 0
        }
    }

    /// Conversation `id` as `user` sees it (nil: not a member).
    public func conversation(_ id: String, for user: String) throws -> ConversationSummary? {
        try summaries(user: user, where: "c.id = ?", .text(id), limit: 1).first
    }

    private func summaries(user: String, where condition: String, _ value: SQLValue, limit: Int) throws -> [ConversationSummary] {
        try withDatabase { db in
            let rows = try db.query(
                """
                SELECT c.id, c.kind, c.title, c.created_at, c.last_seq, c.last_ts, m.role, m.read_seq, m.muted, m.pinned, c.about, c.access, m.muted_until,
                (SELECT COUNT(*) FROM conversation_members x WHERE x.conversation = c.id),
                (SELECT x."user" FROM conversation_members x WHERE x.conversation = c.id AND x."user" <> ? ORDER BY x."user" LIMIT 1),
                \(Self.messageColumns(of: "l"))
                FROM conversation_members m JOIN conversations c ON c.id = m.conversation
                LEFT JOIN messages l ON l.conversation = c.id AND l.seq = c.last_seq
                WHERE m."user" = ? AND \(condition) ORDER BY c.id LIMIT ?
                """,
                .text(user), .text(user), value, .int(Int64(limit)))
            return rows.map { row in
                let id = row[0].text ?? ""
                let kind = row[1].text.flatMap(ConversationKind.init(rawValue:)) ?? .group
                let createdAt = row[3].int ?? 0
                return ConversationSummary(
                    id: id, kind: kind, title: kind == .group ? row[2].text : nil, peer: kind == .direct ? row[14].text : nil,
                    role: Self.role(row[6]), memberCount: Int(row[13].int ?? 0), lastSeq: row[4].int ?? 0,
                    lastMessage: Self.message(row, at: 15, conversation: id), readSeq: row[7].int ?? 0, muted: row[8].int == 1,
                    pinned: row[9].int == 1, createdAt: createdAt, updatedAt: max(createdAt, row[5].int ?? 0),
                    about: kind == .group ? row[10].text : nil, access: kind == .group ? row[11].text.flatMap(GroupAccess.init(rawValue:)) : nil,
                    mutedUntil: (row[12].int ?? 0) > 0 ? row[12].int : nil)
            }
        }
    }

    // MARK: Messages

    /// Stores `draft` from `sender` in conversation `id` (the direct conversation `direct` names
    /// is made first when it does not exist): the next `seq`, read by its sender. A
    /// `clientMsgId` the sender used in the conversation before gets the message it became.
    /// `webhook` makes the event the message causes (written in the same transaction, for `endpoints`).
    /// `member: false` posts for a sender who is not a member (the system, or a bot the app's
    /// backend sends as).
    public func post(
        _ draft: MessageDraft, in id: String, from sender: UserRef, direct: (a: String, b: String)? = nil, member: Bool = true, now: Int64,
        webhook: (ConversationMessage) -> WebhookEvent? = { _ in nil }, endpoints: [String] = []
    ) throws -> Posting {
        // Two nodes posting one `clientMsgId` at once: the second's insert finds the first's
        // row and its transaction is undone; tried again, it finds the message.
        for attempt in 0..<2 {
            do {
                return try writing { db in
                    try db.transaction {
                        let posting = try Self.post(draft, in: id, from: sender, direct: direct, member: member, now: now, in: db)
                        if case .posted(let message, _) = posting, let event = webhook(message) { try Self.insert([event], endpoints: endpoints, in: db) }
                        return posting
                    }
                }
            } catch is StoredMeanwhile where attempt == 0 {
                continue
            }
        }
        throw SQLFailure(description: "message \(draft.clientMsgId) could not be stored")
    }

    static func post(
        _ draft: MessageDraft, in id: String, from sender: UserRef, direct: (a: String, b: String)?, member: Bool = true, now: Int64, in db: any SQLDatabase
    ) throws -> Posting {
        if let direct {
            try db.run(
                "INSERT INTO conversations (id, kind, owner, created_at, last_seq, last_ts) VALUES (?, 'direct', '', ?, 0, ?) ON CONFLICT DO NOTHING",
                .text(id), .int(now), .int(now))
            try addMember(id, user: direct.a, role: .member, readSeq: 0, now: now, in: db)
            try addMember(id, user: direct.b, role: .member, readSeq: 0, now: now, in: db)
        }
        if member {
            guard try membership(id, user: sender.id, in: db) != nil else { return .notMember }
        } else {
            guard try !db.query("SELECT 1 FROM conversations WHERE id = ?", .text(id)).isEmpty else { return .notMember }
        }
        if let row = try db.query(
            "SELECT \(messageColumns) FROM messages WHERE conversation = ? AND sender = ? AND client_msg_id = ?",
            .text(id), .text(sender.id), .text(draft.clientMsgId)
        ).first, let message = message(row, at: 0, conversation: id) {
            return .duplicate(message)
        }
        try db.run("UPDATE conversations SET last_seq = last_seq + 1, last_ts = ? WHERE id = ?", .int(now), .text(id))
        guard let seq = try db.query("SELECT last_seq FROM conversations WHERE id = ?", .text(id)).first?.first?.int else {
            throw SQLFailure(description: "conversation \(id) has no sequence after taking one")
        }
        let message = ConversationMessage(
            conversation: id, seq: seq, from: sender, type: draft.type, text: draft.text, payload: draft.payload, fallback: draft.fallback,
            replyTo: draft.replyTo, mentions: draft.mentions.isEmpty ? nil : draft.mentions, ts: now, clientMsgId: draft.clientMsgId)
        let payload = try draft.payload.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        let stored = try db.run(
            """
            INSERT INTO messages (conversation, seq, sender, sender_name, type, text, payload, fallback, reply_to, mentions, ts, client_msg_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
            """,
            .text(id), .int(seq), .text(sender.id), .text(sender.name), .text(draft.type), draft.text.map(SQLValue.text) ?? .null,
            payload.map(SQLValue.text) ?? .null, draft.fallback.map(SQLValue.text) ?? .null, draft.replyTo.map(SQLValue.int) ?? .null,
            draft.mentions.isEmpty ? .null : .text(draft.mentions.joined(separator: " ")), .int(now), .text(draft.clientMsgId))
        // Not stored: another transaction stored this client id meanwhile (PostgreSQL); undone
        // whole, so the sequence number taken above is not lost.
        guard stored == 1 else { throw StoredMeanwhile() }
        try index(message, in: db)
        try link(MediaMessage.references(draft), to: id, in: db)
        try db.run(
            "UPDATE conversation_members SET read_seq = ? WHERE conversation = ? AND \"user\" = ? AND read_seq < ?",
            .int(seq), .text(id), .text(sender.id), .int(seq))
        return .posted(message, members: try memberIds(of: id, in: db))
    }

    /// The message `sender` posted in conversation `id` under `clientMsgId` as posted (with the
    /// members to tell), nil when it did not: for a post whose commit's answer was lost.
    public func posting(clientMsgId: String, from sender: String, in id: String) throws -> Posting? {
        try withDatabase { db in
            guard
                let message = try db.query(
                    "SELECT \(Self.messageColumns) FROM messages WHERE conversation = ? AND sender = ? AND client_msg_id = ?", .text(id), .text(sender), .text(clientMsgId)
                ).first.flatMap({ Self.message($0, at: 0, conversation: id) })
            else { return nil }
            return .posted(message, members: try Self.memberIds(of: id, in: db))
        }
    }

    /// Message `seq` of conversation `id`.
    public func message(_ seq: Int64, in id: String) throws -> ConversationMessage? {
        try withDatabase { db in try Self.message(seq, in: id, db: db) }
    }

    private static func message(_ seq: Int64, in id: String, db: any SQLDatabase) throws -> ConversationMessage? {
        try db.query("SELECT \(messageColumns) FROM messages WHERE conversation = ? AND seq = ?", .text(id), .int(seq))
            .first.flatMap { message($0, at: 0, conversation: id) }
    }

    /// Message `seq` of conversation `id` takes `text` (edited at `now`).
    public func editMessage(_ seq: Int64, in id: String, text: String, now: Int64) throws {
        try writing { db in
            try db.transaction {
                try db.run("UPDATE messages SET text = ?, edited_at = ? WHERE conversation = ? AND seq = ?", .text(text), .int(now), .text(id), .int(seq))
                try Self.unindex(seq, in: id, db: db)
                if let message = try Self.message(seq, in: id, db: db) { try Self.index(message, in: db) }
            }
        }
    }

    /// Message `seq` of conversation `id` is revoked by `user`: what it said is gone; its
    /// number, sender, type and time stay (a tombstone), so that no client sees a gap.
    public func revokeMessage(_ seq: Int64, in id: String, by user: String) throws {
        try writing { db in
            try db.transaction {
                try db.run(
                    "UPDATE messages SET text = NULL, payload = NULL, fallback = NULL, reply_to = NULL, mentions = NULL, revoked_by = ? WHERE conversation = ? AND seq = ?",
                    .text(user), .text(id), .int(seq))
                try Self.unindex(seq, in: id, db: db)
            }
        }
    }

    /// Up to `limit` messages of conversation `id` after `after`, oldest first.
    public func messages(in id: String, after: Int64, limit: Int) throws -> [ConversationMessage] {
        try withDatabase { db in
            try db.query(
                "SELECT \(Self.messageColumns) FROM messages WHERE conversation = ? AND seq > ? ORDER BY seq LIMIT ?",
                .text(id), .int(after), .int(Int64(limit))
            ).compactMap { Self.message($0, at: 0, conversation: id) }
        }
    }

    /// `user` has read conversation `id` up to `seq` (at most its newest): the new read mark when
    /// it moved forward, nil when it was there already (or `user` is not a member).
    public func markRead(_ id: String, user: String, seq: Int64) throws -> Int64? {
        try writing { db in
            try db.transaction {
                let newest = try db.query("SELECT last_seq FROM conversations WHERE id = ?", .text(id)).first?.first?.int ?? 0
                let mark = min(seq, newest)
                let moved = try db.run(
                    "UPDATE conversation_members SET read_seq = ? WHERE conversation = ? AND \"user\" = ? AND read_seq < ?",
                    .int(mark), .text(id), .text(user), .int(mark))
                return moved == 1 ? mark : nil
            }
        }
    }
}
