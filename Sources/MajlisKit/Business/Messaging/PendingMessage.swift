import MajlisProtocol

/// A message the user sent that the server has not acknowledged yet: shown at once, kept until
/// it is stored (then it is an ordinary message of its conversation), and sent again with the
/// same client id, so that it is posted once however often it is tried.
public struct PendingMessage: Sendable, Equatable, Identifiable {
    public enum Status: Sendable, Equatable {
        case sending
        /// The last try failed: `retry` sends it again.
        case failed(String)
    }

    public var target: MessageTarget
    public var draft: MessageDraft
    public var status: Status
    /// When it was written (the clock's ms).
    public var createdAt: Int64

    public var id: String { draft.clientMsgId }
}
