import MajlisProtocol

/// A message the user sent that the server has not stored in its conversation yet: shown at
/// once, kept until it is stored (then it is an ordinary message of its conversation), and sent
/// again with the same client id, so that it is posted once however often it is tried.
public struct PendingMessage: Sendable, Equatable, Identifiable, Codable {
    public enum Status: Sendable, Equatable, Codable {
        case sending
        /// The last try failed: `retry` sends it again.
        case failed(String)
        /// Held for the app's review (a message to someone who has not written back, past the
        /// server's limit): delivered if released (it then arrives as a message of the
        /// conversation), else rejected (`.rejected`).
        case held(id: String)
        /// Held, and then rejected by the app's review: it will not be delivered.
        case rejected(String)
    }

    public var target: MessageTarget
    public var draft: MessageDraft
    public var status: Status
    /// When it was written (the clock's ms).
    public var createdAt: Int64

    public var id: String { draft.clientMsgId }
}
