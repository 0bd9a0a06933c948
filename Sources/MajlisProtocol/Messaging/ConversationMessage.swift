/// A message of a conversation: the data of `msg.new`, and an entry of `msg.sync`.
public struct ConversationMessage: Sendable, Codable, Equatable {
    public var conversation: String
    /// Assigned by the server: 1, 2, 3, ... in each conversation, with no gaps.
    public var seq: Int64
    public var from: UserRef
    /// "text", or a type code the app defines (a card).
    public var type: String
    public var text: String?
    public var payload: JSONValue?
    /// What a client that does not know `type` shows instead (never absent for a card).
    public var fallback: String?
    /// The `seq` of the message this one answers.
    public var replyTo: Int64?
    /// The users the message names.
    public var mentions: [String]?
    /// Unix milliseconds, the server's.
    public var ts: Int64
    /// The sender's own id for the message (its devices match their unsent copy by it).
    public var clientMsgId: String
    /// When its text was last edited (Unix ms).
    public var editedAt: Int64?
    /// Who revoked it (its sender, or a group's owner or admin): its text, payload, fallback,
    /// reply and mentions are gone.
    public var revokedBy: String?
    /// When a group's owner or an admin featured it (pinned it for every member).
    public var featuredAt: Int64?

    public init(
        conversation: String, seq: Int64, from: UserRef, type: String = "text", text: String?, payload: JSONValue? = nil, fallback: String? = nil,
        replyTo: Int64? = nil, mentions: [String]? = nil, ts: Int64, clientMsgId: String, editedAt: Int64? = nil, revokedBy: String? = nil,
        featuredAt: Int64? = nil
    ) {
        self.featuredAt = featuredAt
        self.conversation = conversation
        self.seq = seq
        self.from = from
        self.type = type
        self.text = text
        self.payload = payload
        self.fallback = fallback
        self.replyTo = replyTo
        self.mentions = mentions
        self.ts = ts
        self.clientMsgId = clientMsgId
        self.editedAt = editedAt
        self.revokedBy = revokedBy
    }
}
