import MajlisProtocol

/// One member's network quality over a reporting interval: `up` from what it sent (loss,
/// jitter), `down` from its receiver reports, both with the round trip.
public struct MemberQuality: Sendable, Equatable {
    public var user: String
    public var up: NetworkQualityLevel
    public var down: NetworkQualityLevel

    public init(user: String, up: NetworkQualityLevel, down: NetworkQualityLevel) {
        self.user = user
        self.up = up
        self.down = down
    }
}
