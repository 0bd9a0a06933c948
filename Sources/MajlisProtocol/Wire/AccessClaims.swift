/// The claims of a Majlis access token (PROTOCOL.md section 3).
public struct AccessClaims: Sendable, Equatable, Codable {
    /// The user id.
    public var sub: String
    /// Display name.
    public var name: String?
    /// Expiry, Unix seconds.
    public var exp: Int64
    /// Not valid before, Unix seconds.
    public var nbf: Int64?
    /// Issued at, Unix seconds.
    public var iat: Int64?
    /// The one room the token is for, or "*" (the default) for any room.
    public var room: String?
    public var grants: Grants?

    public init(sub: String, name: String? = nil, exp: Int64, nbf: Int64? = nil, iat: Int64? = nil, room: String? = nil, grants: Grants? = nil) {
        self.sub = sub
        self.name = name
        self.exp = exp
        self.nbf = nbf
        self.iat = iat
        self.room = room
        self.grants = grants
    }

    /// The Unix times (seconds) a token may carry: years 1970 to 9999, so that any arithmetic in
    /// milliseconds stays far from overflow.
    public static let validTimes: ClosedRange<Int64> = 0...253_402_300_799

    /// Expiry in Unix milliseconds (clamped to `validTimes`).
    public var expiresAtMilliseconds: Int64 { min(max(exp, Self.validTimes.lowerBound), Self.validTimes.upperBound) * 1000 }

    /// The grants, with the protocol's defaults for missing ones.
    public var effectiveGrants: Grants { grants ?? Grants() }

    /// Whether the token may be used in `room`.
    public func allows(room id: String) -> Bool {
        room == nil || room == "*" || room == id
    }
}
