/// A user's request to join a group that asks (`GroupAccess.request`): the data of
/// `conv.request`, and an entry of `conv.requests`.
public struct JoinRequest: Sendable, Codable, Equatable {
    public var conversation: String
    public var user: String
    /// The user's display name when it asked.
    public var name: String
    /// What the user wrote to the group's owner and admins.
    public var note: String?
    /// Unix milliseconds.
    public var at: Int64

    public init(conversation: String, user: String, name: String, note: String? = nil, at: Int64) {
        self.conversation = conversation
        self.user = user
        self.name = name
        self.note = note
        self.at = at
    }
}
