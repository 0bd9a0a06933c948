/// How well a member's network carries audio (the values of `network.quality`).
public enum NetworkQualityLevel: String, Sendable, Codable, CaseIterable, Comparable {
    case excellent, good, poor, bad, down

    /// The level for a packet loss fraction (0...1).
    public init(loss: Double) {
        switch loss {
        case ..<0.01: self = .excellent
        case ..<0.03: self = .good
        case ..<0.08: self = .poor
        case ..<0.20: self = .bad
        default: self = .down
        }
    }

    /// The worst of what loss, jitter (ms) and round trip (ms) each say.
    public init(loss: Double, jitter: Double, roundTrip: Double?) {
        let jitterLevel: Self = jitter < 30 ? .excellent : jitter < 60 ? .good : jitter < 100 ? .poor : jitter < 200 ? .bad : .down
        var worst = Swift.max(Self(loss: loss), jitterLevel)
        if let roundTrip {
            worst = Swift.max(worst, roundTrip < 150 ? .excellent : roundTrip < 300 ? .good : roundTrip < 500 ? .poor : roundTrip < 800 ? .bad : .down)
        }
        self = worst
    }

    private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
}
