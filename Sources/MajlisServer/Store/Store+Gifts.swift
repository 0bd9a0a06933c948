import MajlisProtocol

/// Gifts the app's backend sent in rooms (`gift.send`), one row each, written in the same
/// transaction as the room's change; a room's leaderboard is read from them.
extension Store {
    /// Keeps `gift` under `key`; a key the room has stored already keeps nothing more.
    static func insertGift(room: String, gift: Gift, key: String, in db: any SQLDatabase) throws {
        try db.run(
            "INSERT INTO gifts (room, key, giver, receiver, seat, pack, item, count, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (room, key) DO NOTHING",
            .text(room), .text(key), .text(gift.from), .text(gift.to), gift.index.map { .int(Int64($0)) } ?? .null, .text(gift.pack), .text(gift.item),
            .int(Int64(gift.count)), .int(gift.ts))
    }

    /// The room's top givers and receivers by items, of gifts sent from `since` to before
    /// `until` (Unix ms), at most `limit` each, the most first (equal counts by user id).
    public func giftLeaders(room: String, since: Int64, until: Int64, limit: Int) throws -> GiftLeaders {
        try withDatabase { db in
            // (PostgreSQL sums 64-bit integers as numeric: cast back.)
            func top(_ column: String) throws -> [GiftTally] {
                try db.query(
                    "SELECT \(column), CAST(SUM(count) AS BIGINT) FROM gifts WHERE room = ? AND ts >= ? AND ts < ? GROUP BY \(column) ORDER BY SUM(count) DESC, \(column) LIMIT ?",
                    .text(room), .int(since), .int(until), .int(Int64(limit))
                ).map { GiftTally(user: $0[0].text ?? "", count: $0[1].int ?? 0) }
            }
            return GiftLeaders(givers: try top("giver"), receivers: try top("receiver"))
        }
    }
}
