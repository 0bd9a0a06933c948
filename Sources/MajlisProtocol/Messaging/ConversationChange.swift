/// The data of `conv.updated`: what changed in a conversation. Only the fields that changed
/// are present. Membership, roles and title go to every member (a member just added learns of
/// the conversation this way); `muted` and `pinned` (one member's own settings) go to that
/// member's other devices.
public struct ConversationChange: Sendable, Codable, Equatable {
    public var conversation: String
    /// Who made the change.
    public var by: String
    public var kind: ConversationKind?
    public var title: String?
    public var about: String?
    public var access: GroupAccess?
    public var joined: [String]?
    public var left: [String]?
    public var memberCount: Int?
    /// The group's new owner (its owner left).
    public var owner: String?
    /// A member whose role changed, and the role it has now; or who is kept from sending until
    /// `mutedUntil` (Unix ms; 0: no more).
    public var user: String?
    public var role: Role?
    public var mutedUntil: Int64?
    public var muted: Bool?
    public var pinned: Bool?

    public init(
        conversation: String, by: String, kind: ConversationKind? = nil, title: String? = nil, joined: [String]? = nil, left: [String]? = nil,
        memberCount: Int? = nil, owner: String? = nil, user: String? = nil, role: Role? = nil, muted: Bool? = nil, pinned: Bool? = nil,
        about: String? = nil, access: GroupAccess? = nil, mutedUntil: Int64? = nil
    ) {
        self.about = about
        self.access = access
        self.mutedUntil = mutedUntil
        self.conversation = conversation
        self.by = by
        self.kind = kind
        self.title = title
        self.joined = joined
        self.left = left
        self.memberCount = memberCount
        self.owner = owner
        self.user = user
        self.role = role
        self.muted = muted
        self.pinned = pinned
    }
}
