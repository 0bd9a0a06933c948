import MajlisProtocol

/// An event the room hands out, and to whom.
public struct Delivery: Sendable, Equatable {
    public var audience: Audience
    /// Set on events that change shared room state.
    public var seq: Int64?
    public var event: ServerEvent

    public init(audience: Audience, seq: Int64?, event: ServerEvent) {
        self.audience = audience
        self.seq = seq
        self.event = event
    }
}
