/// A member of a conversation, as `conv.get` lists them.
public struct ConversationMember: Sendable, Codable, Equatable {
    public var user: String
    public var role: Role
    /// The newest `seq` this member has read: who has read a message is every member whose
    /// `readSeq` is at least its `seq`.
    public var readSeq: Int64
    public var joinedAt: Int64
    /// Until when (Unix ms) the group's owner or an admin keeps this member from sending.
    public var mutedUntil: Int64?

    public init(user: String, role: Role, readSeq: Int64, joinedAt: Int64, mutedUntil: Int64? = nil) {
        self.mutedUntil = mutedUntil
        self.user = user
        self.role = role
        self.readSeq = readSeq
        self.joinedAt = joinedAt
    }
}
