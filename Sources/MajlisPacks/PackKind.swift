/// What a pack's items are for: `emoji` sent to a seat by a member, or `gift`s the app's backend
/// posts.
public enum PackKind: String, Sendable, Codable, CaseIterable {
    case emoji
    case gift
}
