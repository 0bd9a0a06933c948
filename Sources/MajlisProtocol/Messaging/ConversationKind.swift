/// What kind of conversation: between two users (made by the first message), or a group (made by
/// `conv.create`, joined by invitation).
public enum ConversationKind: String, Sendable, Codable, CaseIterable {
    case direct
    case group
}
