import Foundation
import MajlisProtocol

/// Who is online, for their contacts (docs/protocol.md section 17, Presence). While a user has a
/// session on a node, that node keeps a row for them (`presence_nodes`), so that every node of a
/// cluster answers alike: a user is online while any node has a row. The rows of a node that
/// stopped without saying so go when it starts again, or when the other nodes find it gone (until
/// then its users are online, for every node alike). When each user's last device went away, and
/// whom they share their presence with, is kept (`user_presence`).
///
/// A user's contacts are the users they share a direct conversation with in which both have
/// written, neither blocking the other: someone who only wrote to them, unanswered, is not one.
extension Store {
    /// Marks `user` online on `node`; whether they were online on no other node before.
    public func cameOnline(_ user: String, node: String, now: Int64) throws -> Bool {
        try writing { db in
            try db.transaction {
                try Self.lockPresence(of: user, in: db)
                let before = try Self.presenceNodes(of: user, in: db)
                try db.run(
                    #"INSERT INTO presence_nodes ("user", node, since) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"#, .text(user), .text(node), .int(now))
                return !before.contains { $0 != node }
            }
        }
    }

    /// `user` has no session on `node` any more; whether that was their last anywhere (they were
    /// last seen `now` then).
    public func wentOffline(_ user: String, node: String, now: Int64) throws -> Bool {
        try writing { db in
            try db.transaction {
                try Self.lockPresence(of: user, in: db)
                try db.run(#"DELETE FROM presence_nodes WHERE "user" = ? AND node = ?"#, .text(user), .text(node))
                guard try Self.presenceNodes(of: user, in: db).isEmpty else { return false }
                try db.run(#"UPDATE user_presence SET last_seen = ? WHERE "user" = ?"#, .int(now), .text(user))
                return true
            }
        }
    }

    /// Forgets every session `node` had (it stopped, or is gone); the users who are online on no
    /// node now, last seen `now`.
    public func clearPresence(of node: String, now: Int64) throws -> [String] {
        try writing { db in
            try db.transaction {
                let users = try db.query(#"SELECT "user" FROM presence_nodes WHERE node = ? ORDER BY "user""#, .text(node)).compactMap { $0.first?.text }
                var gone: [String] = []
                for user in users {
                    try Self.lockPresence(of: user, in: db)
                    try db.run(#"DELETE FROM presence_nodes WHERE "user" = ? AND node = ?"#, .text(user), .text(node))
                    guard try Self.presenceNodes(of: user, in: db).isEmpty else { continue }
                    try db.run(#"UPDATE user_presence SET last_seen = ? WHERE "user" = ?"#, .int(now), .text(user))
                    gone.append(user)
                }
                return gone
            }
        }
    }

    /// The nodes with sessions on record that are not among `liveNodes` and have had none begin
    /// since `before` (a node that just started may not be listed live yet).
    public func presenceNodes(missingFrom liveNodes: Set<String>, before: Int64) throws -> [String] {
        try withDatabase { db in
            try db.query("SELECT node, MAX(since) FROM presence_nodes GROUP BY node ORDER BY node").compactMap { row in
                guard let node = row[0].text, !liveNodes.contains(node), (row[1].int ?? 0) < before else { return nil }
                return node
            }
        }
    }

    /// Who sees `user`'s presence.
    public func presenceSharing(of user: String) throws -> PresenceSharing {
        try withDatabase { db in
            try db.query(#"SELECT share FROM user_presence WHERE "user" = ?"#, .text(user)).first?.first?.text.flatMap(PresenceSharing.init) ?? .contacts
        }
    }

    /// Sets who sees `user`'s presence; whether that changed it.
    public func setPresenceSharing(_ sharing: PresenceSharing, of user: String) throws -> Bool {
        try writing { db in
            try db.transaction {
                try Self.lockPresence(of: user, in: db)
                return try db.run(#"UPDATE user_presence SET share = ? WHERE "user" = ? AND share <> ?"#, .text(sharing.rawValue), .text(user), .text(sharing.rawValue)) == 1
            }
        }
    }

    /// `user`'s contacts, by id.
    public func contacts(of user: String) throws -> [String] {
        try withDatabase { db in
            try db.query(
                """
                SELECT o."user" FROM conversation_members me
                JOIN conversations c ON c.id = me.conversation AND c.kind = 'direct'
                JOIN conversation_members o ON o.conversation = me.conversation AND o."user" <> me."user"
                WHERE me."user" = ?
                AND EXISTS (SELECT 1 FROM messages WHERE conversation = me.conversation AND sender = me."user")
                AND EXISTS (SELECT 1 FROM messages WHERE conversation = me.conversation AND sender = o."user")
                AND NOT EXISTS (SELECT 1 FROM blocks b WHERE (b."user" = me."user" AND b.blocked = o."user") OR (b."user" = o."user" AND b.blocked = me."user"))
                ORDER BY o."user"
                """, .text(user)
            ).compactMap { $0.first?.text }
        }
    }

    /// The presence of those of `users` who are `viewer`'s contacts, as `viewer` may see it.
    public func presence(of users: [String], seenBy viewer: String) throws -> [UserPresence] {
        let contacts = Set(try contacts(of: viewer))
        return try withDatabase { db in
            try users.filter(contacts.contains).map { user in
                let row = try db.query(#"SELECT share, last_seen FROM user_presence WHERE "user" = ?"#, .text(user)).first
                if row?[0].text == PresenceSharing.nobody.rawValue { return UserPresence(user: user, online: false, hidden: true) }
                let online = try !Self.presenceNodes(of: user, in: db).isEmpty
                return UserPresence(user: user, online: online, lastSeen: online ? nil : row?[1].int)
            }
        }
    }

    /// Makes `user`'s presence row if it has none, and holds it (PostgreSQL: until the
    /// transaction ends), so that two nodes changing one user's presence at once take turns.
    private static func lockPresence(of user: String, in db: any SQLDatabase) throws {
        try db.run(
            #"INSERT INTO user_presence ("user") VALUES (?) ON CONFLICT ("user") DO UPDATE SET share = user_presence.share"#, .text(user))
    }

    private static func presenceNodes(of user: String, in db: any SQLDatabase) throws -> [String] {
        try db.query(#"SELECT node FROM presence_nodes WHERE "user" = ?"#, .text(user)).compactMap { $0.first?.text }
    }
}
