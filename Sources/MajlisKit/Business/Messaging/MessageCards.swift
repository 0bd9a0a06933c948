import MajlisProtocol

/// The app's message cards by type code: a decoder for each type it knows makes its own `Card`
/// of a message's payload. A message of any other type, or one whose payload its decoder cannot
/// read, is shown by its fallback text: an app that is older than a card never fails on it.
///
/// ```swift
/// enum Card: Sendable { case roomInvite(room: String) }
/// var cards = MessageCards<Card>()
/// cards.register("room_invite") { payload in payload?["room"]?.stringValue.map(Card.roomInvite) }
/// switch cards.content(of: message) { case .card(let card): ...; case .fallback(let text): ...; ... }
/// ```
public struct MessageCards<Card: Sendable>: Sendable {
    public typealias Decoder = @Sendable (JSONValue?) -> Card?
    private var decoders: [String: Decoder] = [:]

    public init() {}

    /// Reads messages of type `type` with `decode` (nil: it could not; the fallback is shown).
    public mutating func register(_ type: String, _ decode: @escaping Decoder) {
        decoders[type] = decode
    }

    /// The type codes this app reads.
    public var types: Set<String> { Set(decoders.keys) }

    /// What to show for `message`.
    public func content(of message: ConversationMessage) -> MessageContent<Card> {
        if message.revokedBy != nil { return .revoked }
        if message.type == "text" { return .text(message.text ?? "") }
        if let decode = decoders[message.type], let card = decode(message.payload) { return .card(card) }
        return .fallback(Self.fallback(of: message))
    }

    /// A card's text for any client: its fallback, else its text, else its type.
    public static func fallback(of message: ConversationMessage) -> String {
        if let fallback = message.fallback, !fallback.isEmpty { return fallback }
        if let text = message.text, !text.isEmpty { return text }
        return message.type
    }
}
