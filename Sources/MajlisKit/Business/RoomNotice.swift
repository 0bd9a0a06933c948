/// A member joining or leaving, shown between chat messages.
public struct RoomNotice: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case joined
        /// With the server's reason ("left", "kicked", "timeout", ...).
        case left(reason: String)
    }

    public var kind: Kind
    public var user: String
    /// The member's name when it happened.
    public var name: String
    /// Unix milliseconds, on the SDK's clock.
    public var at: Int64

    public init(kind: Kind, user: String, name: String, at: Int64) {
        self.kind = kind
        self.user = user
        self.name = name
        self.at = at
    }
}
