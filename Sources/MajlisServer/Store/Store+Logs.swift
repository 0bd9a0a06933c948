import Foundation
import MajlisProtocol

/// Logs the app's backend asked of users' clients (`log_requests`): asked, then delivered as one
/// of the user's text uploads. A request waits for its user's next connection on any node.
extension Store {
    /// A log request as the store keeps it.
    public struct LogRequestRecord: Sendable, Equatable {
        public var request: LogRequest
        public var user: String
        /// Unix ms.
        public var askedAt: Int64
        /// The upload that holds the log, once the client delivered it.
        public var media: String?
        public var deliveredAt: Int64?

        public init(request: LogRequest, user: String, askedAt: Int64, media: String? = nil, deliveredAt: Int64? = nil) {
            self.request = request
            self.user = user
            self.askedAt = askedAt
            self.media = media
            self.deliveredAt = deliveredAt
        }
    }

    private static let logColumns = #"id, "user", since, until, reason, asked_at, media, delivered_at"#

    private static func logRequest(_ row: [SQLValue]) -> LogRequestRecord {
        LogRequestRecord(
            request: LogRequest(id: row[0].text ?? "", since: row[2].int ?? 0, until: row[3].int, reason: row[4].text),
            user: row[1].text ?? "", askedAt: row[5].int ?? 0, media: row[6].text, deliveredAt: row[7].int)
    }

    /// Records that `user`'s client is asked for `request`.
    public func askLog(_ request: LogRequest, of user: String, now: Int64) throws {
        try writing { db in
            try db.run(
                "INSERT INTO log_requests (\(Self.logColumns)) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)", .text(request.id), .text(user), .int(request.since),
                request.until.map(SQLValue.int) ?? .null, request.reason.map(SQLValue.text) ?? .null, .int(now))
        }
    }

    /// Log request `id`, if there is one.
    public func logRequest(_ id: String) throws -> LogRequestRecord? {
        try withDatabase { db in try db.query("SELECT \(Self.logColumns) FROM log_requests WHERE id = ?", .text(id)).first.map(Self.logRequest) }
    }

    /// `user`'s requests not delivered yet, asked at or after `since`, oldest first.
    public func pendingLogRequests(of user: String, since: Int64) throws -> [LogRequest] {
        try withDatabase { db in
            try db.query(
                #"SELECT \#(Self.logColumns) FROM log_requests WHERE "user" = ? AND delivered_at IS NULL AND asked_at >= ? ORDER BY asked_at, id"#,
                .text(user), .int(since)
            ).map { Self.logRequest($0).request }
        }
    }

    /// Marks `user`'s request `id` delivered in `media`, unless it was already (the first
    /// delivery stays). Returns the request as it is now; nil when `user` has no request `id`.
    public func deliverLog(_ id: String, of user: String, media: String, now: Int64) throws -> LogRequestRecord? {
        try writing { db in
            try db.run(
                #"UPDATE log_requests SET media = ?, delivered_at = ? WHERE id = ? AND "user" = ? AND delivered_at IS NULL"#, .text(media), .int(now),
                .text(id), .text(user))
            return try db.query(#"SELECT \#(Self.logColumns) FROM log_requests WHERE id = ? AND "user" = ?"#, .text(id), .text(user)).first.map(Self.logRequest)
        }
    }
}
