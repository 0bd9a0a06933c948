/// Who may join a group: by invitation only (`private`, the default), or anyone who finds it in
/// `conv.discover` (a public group), at once (`open`) or once its owner or an admin accepts
/// (`request`).
public enum GroupAccess: String, Sendable, Codable, CaseIterable {
    case `private`
    case open
    case request

    /// Whether the group is listed by `conv.discover`.
    public var isPublic: Bool { self != .private }
}
