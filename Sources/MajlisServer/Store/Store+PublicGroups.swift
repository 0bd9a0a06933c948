import MajlisProtocol

/// Public groups (found by `conv.discover`, joined freely or on request), what a group's owner
/// and admins keep of its members (a member kept from sending) and of its messages (featured).
extension Store {
    /// Public groups with every one of `query`'s terms in their title or about (every public
    /// group without a query), the largest first, from `offset`, at most `limit`.
    public func publicGroups(matching query: String?, offset: Int, limit: Int) throws -> [PublicGroup] {
        let terms = query.map(SearchTerms.query) ?? []
        // Terms are letters and digits only: none is a LIKE wildcard.
        var conditions = ["c.access <> 'private'"]
        var values: [SQLValue] = []
        for term in terms {
            conditions.append("(' ' || c.terms || ' ') LIKE ?")
            values.append(.text("% " + term.text + (term.prefix ? "%" : " %")))
        }
        values += [.int(Int64(limit)), .int(Int64(offset))]
        return try withDatabase { db in
            try db.query(
                """
                SELECT c.id, c.title, c.about, c.access, c.created_at, (SELECT COUNT(*) FROM conversation_members x WHERE x.conversation = c.id) AS members
                FROM conversations c WHERE \(conditions.joined(separator: " AND ")) ORDER BY members DESC, c.id LIMIT ? OFFSET ?
                """, values
            ).map { row in
                PublicGroup(
                    id: row[0].text ?? "", title: row[1].text ?? "", about: row[2].text, access: row[3].text.flatMap(GroupAccess.init(rawValue:)) ?? .open,
                    memberCount: Int(row[5].int ?? 0), createdAt: row[4].int ?? 0)
            }
        }
    }

    /// `request` is pending for its group; whether it was not before (a second request only
    /// updates the note).
    @discardableResult
    public func addJoinRequest(_ request: JoinRequest) throws -> Bool {
        try writing { db in
            try db.transaction {
                let known = try !db.query(
                    "SELECT 1 FROM conversation_requests WHERE conversation = ? AND \"user\" = ?", .text(request.conversation), .text(request.user)
                ).isEmpty
                if known {
                    try db.run(
                        "UPDATE conversation_requests SET note = ?, name = ? WHERE conversation = ? AND \"user\" = ?", request.note.map(SQLValue.text) ?? .null,
                        .text(request.name), .text(request.conversation), .text(request.user))
                } else {
                    try db.run(
                        "INSERT INTO conversation_requests (conversation, \"user\", name, note, at) VALUES (?, ?, ?, ?, ?)", .text(request.conversation),
                        .text(request.user), .text(request.name), request.note.map(SQLValue.text) ?? .null, .int(request.at))
                }
                return !known
            }
        }
    }

    /// Group `id`'s pending join requests, oldest first.
    public func joinRequests(of id: String) throws -> [JoinRequest] {
        try withDatabase { db in
            try db.query("SELECT \"user\", name, note, at FROM conversation_requests WHERE conversation = ? ORDER BY at, \"user\"", .text(id)).map { row in
                JoinRequest(conversation: id, user: row[0].text ?? "", name: row[1].text ?? "", note: row[2].text, at: row[3].int ?? 0)
            }
        }
    }

    /// Takes `user`'s pending request to join `id` away (answered): whether there was one.
    @discardableResult
    public func removeJoinRequest(_ id: String, user: String) throws -> Bool {
        try writing { db in try db.run("DELETE FROM conversation_requests WHERE conversation = ? AND \"user\" = ?", .text(id), .text(user)) == 1 }
    }

    /// Keeps `user` from sending in `id` until `until` (Unix ms; 0: no more).
    public func muteMember(_ id: String, user: String, until: Int64) throws {
        try writing { db in
            _ = try db.run("UPDATE conversation_members SET muted_until = ? WHERE conversation = ? AND \"user\" = ?", .int(until), .text(id), .text(user))
        }
    }

    /// Message `seq` of `id` is featured from `at` (nil: no more).
    public func feature(_ seq: Int64, in id: String, at: Int64?) throws {
        try writing { db in
            _ = try db.run("UPDATE messages SET featured_at = ? WHERE conversation = ? AND seq = ?", at.map(SQLValue.int) ?? .null, .text(id), .int(seq))
        }
    }

    /// Group `id`'s featured messages, the latest featured first (at most `limit`).
    public func featuredMessages(in id: String, limit: Int = 50) throws -> [ConversationMessage] {
        try withDatabase { db in
            try db.query(
                "SELECT \(Self.messageColumns) FROM messages WHERE conversation = ? AND featured_at IS NOT NULL ORDER BY featured_at DESC, seq DESC LIMIT ?",
                .text(id), .int(Int64(limit))
            ).compactMap { Self.message($0, at: 0, conversation: id) }
        }
    }
}
