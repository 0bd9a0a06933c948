import MajlisProtocol

/// A stranger's message past the stranger limit, held for the app's backend to release or
/// reject (`majlis serve --stranger-overflow hold`; the server API's `/v1/held-messages`).
public struct HeldMessage: Sendable, Equatable, Encodable {
    /// `h-` and the time it was held, so that ids sort oldest first.
    public var id: String
    /// The direct conversation it goes to once released.
    public var conversation: String
    public var from: UserRef
    public var to: String
    public var draft: MessageDraft
    public var at: Int64

    private enum CodingKeys: String, CodingKey {
        case id, conversation, from, to, type, text, payload, fallback, replyTo, mentions, clientMsgId, at
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(conversation, forKey: .conversation)
        try container.encode(from, forKey: .from)
        try container.encode(to, forKey: .to)
        try container.encode(draft.type, forKey: .type)
        try container.encodeIfPresent(draft.text, forKey: .text)
        try container.encodeIfPresent(draft.payload, forKey: .payload)
        try container.encodeIfPresent(draft.fallback, forKey: .fallback)
        try container.encodeIfPresent(draft.replyTo, forKey: .replyTo)
        if !draft.mentions.isEmpty { try container.encode(draft.mentions, forKey: .mentions) }
        try container.encode(draft.clientMsgId, forKey: .clientMsgId)
        try container.encode(at, forKey: .at)
    }
}
