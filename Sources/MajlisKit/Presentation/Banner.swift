/// A banner over the room screen, most important first.
public struct Banner: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case roomEnded, kicked, left, failed, reconnecting, networkPoor, tokenExpiring, chatMuted, invite
        /// Where this user's request to speak stands.
        case request
    }

    public var kind: Kind
    public var text: String

    public init(kind: Kind, text: String) {
        self.kind = kind
        self.text = text
    }
}
