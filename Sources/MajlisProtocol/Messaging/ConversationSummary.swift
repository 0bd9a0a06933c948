/// A conversation as one of its members sees it: an entry of `conv.list`, and `conv.get`'s
/// `conversation`.
public struct ConversationSummary: Sendable, Codable, Equatable {
    public var id: String
    public var kind: ConversationKind
    /// A group's title, what it is about, and who may join it.
    public var title: String?
    public var about: String?
    public var access: GroupAccess?
    /// A direct conversation's other user.
    public var peer: String?
    /// The member's role: a direct conversation's two members are both `member`.
    public var role: Role
    public var memberCount: Int
    /// The newest message's `seq` (0: none yet).
    public var lastSeq: Int64
    public var lastMessage: ConversationMessage?
    /// The newest `seq` the member has read.
    public var readSeq: Int64
    /// Messages after `readSeq`.
    public var unread: Int64
    public var muted: Bool
    public var pinned: Bool
    /// Until when (Unix ms) the group's owner or an admin keeps this member from sending.
    public var mutedUntil: Int64?
    public var createdAt: Int64
    /// The newest message's time, else `createdAt`: the order of a conversation list.
    public var updatedAt: Int64

    public init(
        id: String, kind: ConversationKind, title: String? = nil, peer: String? = nil, role: Role, memberCount: Int, lastSeq: Int64,
        lastMessage: ConversationMessage? = nil, readSeq: Int64, muted: Bool = false, pinned: Bool = false, createdAt: Int64, updatedAt: Int64,
        about: String? = nil, access: GroupAccess? = nil, mutedUntil: Int64? = nil
    ) {
        self.about = about
        self.access = access
        self.mutedUntil = mutedUntil
        self.id = id
        self.kind = kind
        self.title = title
        self.peer = peer
        self.role = role
        self.memberCount = memberCount
        self.lastSeq = lastSeq
        self.lastMessage = lastMessage
        self.readSeq = readSeq
        unread = max(0, lastSeq - readSeq)
        self.muted = muted
        self.pinned = pinned
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
