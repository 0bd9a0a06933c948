/// What `chat.send` asks to post.
public struct ChatDraft: Sendable, Equatable {
    public var type: String
    public var text: String?
    public var payload: JSONValue?
    /// The client's own id for the message: the same id twice stores one message.
    public var clientMsgId: String

    public init(type: String = "text", text: String?, payload: JSONValue? = nil, clientMsgId: String) {
        self.type = type
        self.text = text
        self.payload = payload
        self.clientMsgId = clientMsgId
    }
}
