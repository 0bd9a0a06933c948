import Foundation

/// When each user's sessions were last revoked by the app's backend: a token issued before then
/// (or in that second) is refused at `hello` and `session.renew`, on every node.
extension Store {
    /// A user's last revocation.
    public struct Revocation: Sendable, Equatable {
        /// Unix ms.
        public var at: Int64
        public var reason: String

        public init(at: Int64, reason: String) {
            self.at = at
            self.reason = reason
        }

        /// Whether a token issued at `issuedAt` (Unix seconds; nil: not said) was issued before
        /// the revocation, or in its second.
        public func refuses(issuedAt: Int64?) -> Bool {
            guard let issuedAt else { return true }
            return issuedAt <= at / 1000
        }
    }

    /// Revokes `user`'s sessions at `now` (a later revocation replaces an earlier one).
    public func revokeSessions(of user: String, reason: String, now: Int64) throws {
        try writing { db in
            try db.run(
                #"INSERT INTO session_revocations ("user", revoked_at, reason) VALUES (?, ?, ?) ON CONFLICT ("user") DO UPDATE SET revoked_at = excluded.revoked_at, reason = excluded.reason"#,
                .text(user), .int(now), .text(reason))
        }
    }

    /// `user`'s last revocation, if any.
    public func revocation(of user: String) throws -> Revocation? {
        try withDatabase { db in
            try db.query(#"SELECT revoked_at, reason FROM session_revocations WHERE "user" = ?"#, .text(user)).first.map {
                Revocation(at: $0[0].int ?? 0, reason: $0[1].text ?? "")
            }
        }
    }
}
