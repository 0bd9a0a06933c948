/// Where `msg.send` posts: to a user (their direct conversation, made by the first message) or to
/// a conversation the sender is a member of.
public enum MessageTarget: Sendable, Equatable, Codable {
    case user(String)
    case conversation(String)
}
