import MajlisProtocol

/// A conversation as the app's backend sees it through the server API: what it is, not any
/// member's own marks (`ConversationSummary` is a member's view).
public struct ConversationInfo: Sendable, Equatable, Encodable {
    public var id: String
    public var kind: ConversationKind
    /// A group's title and owner.
    public var title: String?
    public var owner: String?
    public var memberCount: Int
    public var lastSeq: Int64
    public var createdAt: Int64
    /// The newest message's time (else `createdAt`).
    public var updatedAt: Int64
    /// A group's: who may join it, and what it is about.
    public var access: GroupAccess?
    public var about: String?
}
