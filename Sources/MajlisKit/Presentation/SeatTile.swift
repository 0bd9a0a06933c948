/// One seat as the grid shows it.
public struct SeatTile: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case empty
        case occupied(userId: String)
        case locked
    }

    public var index: Int
    public var kind: Kind
    /// The seated user's name ("You" for this user), or the seat's label.
    public var title: String
    /// The seated user's role, worded ("host", "admin"), or empty.
    public var mark: String
    /// The seated user's microphone switch.
    public var micOn: Bool
    /// The host muted this seat.
    public var hostMuted: Bool
    /// Draw the speaking ring.
    public var speaking: Bool
    public var isMe: Bool

    public init(index: Int, kind: Kind, title: String, mark: String = "", micOn: Bool, hostMuted: Bool, speaking: Bool, isMe: Bool) {
        self.index = index
        self.kind = kind
        self.title = title
        self.mark = mark
        self.micOn = micOn
        self.hostMuted = hostMuted
        self.speaking = speaking
        self.isMe = isMe
    }
}
