/// A member's role in a room.
public enum Role: String, Sendable, Codable, CaseIterable {
    case owner
    case admin
    case member

    /// Owners and admins moderate the room.
    public var isModerator: Bool { self != .member }
}
