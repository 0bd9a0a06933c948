import MajlisProtocol

/// What a conversation screen shows for one message (`MessageCards.content(of:)`).
public enum MessageContent<Card: Sendable>: Sendable {
    /// A text message's text.
    case text(String)
    /// A card the app's registered decoder made of the message's payload.
    case card(Card)
    /// A card this app does not know (or could not read): the text every client can show.
    case fallback(String)
    /// Revoked: nothing of what it said is left.
    case revoked
}

extension MessageContent: Equatable where Card: Equatable {}
