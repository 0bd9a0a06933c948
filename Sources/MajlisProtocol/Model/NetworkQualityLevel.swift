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

    private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
}
