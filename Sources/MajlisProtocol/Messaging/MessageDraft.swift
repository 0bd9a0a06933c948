/// What `msg.send` asks to post.
public struct MessageDraft: Sendable, Equatable, Codable {
    public var type: String
    public var text: String?
    public var payload: JSONValue?
    public var fallback: String?
    public var replyTo: Int64?
    public var mentions: [String]
    /// The client's own id for the message: the same id twice from the same user in the same
    /// conversation posts one message.
    public var clientMsgId: String

    public init(
        type: String = "text", text: String?, payload: JSONValue? = nil, fallback: String? = nil, replyTo: Int64? = nil, mentions: [String] = [],
        clientMsgId: String
    ) {
        self.type = type
        self.text = text
        self.payload = payload
        self.fallback = fallback
        self.replyTo = replyTo
        self.mentions = mentions
        self.clientMsgId = clientMsgId
    }
}
