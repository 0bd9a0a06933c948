import MajlisProtocol
import MajlisTransport

/// One member's network quality over a reporting interval: `up` from what it sent (loss,
/// jitter), `down` from its receiver reports, both with the round trip.
public struct MemberQuality: Sendable, Equatable {
    public var user: String
    public var up: NetworkQualityLevel
    public var down: NetworkQualityLevel
    /// What the levels were made from, when measured: the worst loss (0...1) and jitter (ms)
    /// of the interval on each leg.
    public var upMeasure: LegMeasure?
    public var downMeasure: LegMeasure?

    /// Loss (0...1) and jitter (ms) of one leg.
    public struct LegMeasure: Sendable, Equatable {
        public var loss: Double
        public var jitter: Double
    }

    public init(user: String, up: NetworkQualityLevel, down: NetworkQualityLevel, upMeasure: LegMeasure? = nil, downMeasure: LegMeasure? = nil) {
        self.user = user
        self.up = up
        self.down = down
        self.upMeasure = upMeasure
        self.downMeasure = downMeasure
    }
}
