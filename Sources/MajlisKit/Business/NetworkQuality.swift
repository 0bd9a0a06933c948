/// How well a user's network carries audio (the values of `network.quality`).
public enum NetworkQuality: String, Sendable, Equatable, CaseIterable {
    case excellent, good, poor, bad, down

    /// Whether the user should be told.
    public var isDegraded: Bool { self == .poor || self == .bad || self == .down }
}
