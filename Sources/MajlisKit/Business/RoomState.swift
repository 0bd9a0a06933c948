import MajlisProtocol

/// Everything a voice room screen shows, mirrored from the server by `VoiceRoom`. Equatable, so
/// a view can redraw only on change.
public struct RoomState: Sendable, Equatable {
    /// Where the room stands for this user.
    public enum Status: Sendable, Equatable {
        case idle
        case joining
        case joined
        /// The connection dropped; the SDK is getting it back.
        case reconnecting
        case left
        case kicked(by: String, until: Int64?)
        case ended(reason: String)
        case failed(String)
    }

    /// Where this user's own request to speak stands.
    public enum RequestStatus: Sendable, Equatable {
        /// Sent; waiting for the owner or an admin.
        case pending
        /// Accepted onto the seat with this index.
        case accepted(index: Int)
        case rejected
        /// Withdrawn by this user.
        case cancelled
        /// Nobody answered in time.
        case expired
    }

    /// A seat invitation waiting for this user's answer.
    public struct Invite: Sendable, Equatable {
        public var inviteId: String
        public var from: String
        public var index: Int?

        public init(inviteId: String, from: String, index: Int?) {
            self.inviteId = inviteId
            self.from = from
            self.index = index
        }
    }

    public var roomId: String
    public var status: Status = .idle
    /// This user's id.
    public var me: String = ""
    public var room: RoomInfo?
    /// The last room event applied.
    public var seq: Int64 = 0
    public var seats: [Seat] = []
    /// Members known to this client (the snapshot's list, kept up to date by events).
    public var members: [Member] = []
    public var memberCount = 0
    public var attributes: [String: AttributeValue] = [:]
    public var role: Role = .member
    public var chatMuted = false
    /// This user's pending request to speak.
    public var myRequest: SeatRequest?
    /// The last answer to this user's request to speak (nil before the first request).
    public var requestStatus: RequestStatus?
    /// Members joining and leaving since this client joined, oldest first (the latest 50).
    public var notices: [RoomNotice] = []
    /// Pending requests (filled for the owner and admins).
    public var requests: [SeatRequest] = []
    /// Recent chat, oldest first.
    public var chat: [ChatMessage] = []
    public var lastMsgId: Int64 = 0
    public var invite: Invite?
    /// Whether the microphone is being sent.
    public var publishing = false
    /// The server warned that the access token is about to expire (Unix seconds).
    public var tokenExpiresAt: Int64?
    /// Speaking levels by user (0...100), from the media plane.
    public var levels: [String: Int] = [:]
    /// This user's network, from the media plane (nil until measured).
    public var networkQuality: NetworkQuality?

    public init(roomId: String) { self.roomId = roomId }

    /// The seat this user holds.
    public var mySeat: Int? { seats.first { $0.user == me && $0.state == .occupied }?.index }

    /// Whether this user moderates the room.
    public var isModerator: Bool { role.isModerator }

    /// Whether this user may be heard now: seated, seat not host-muted, mic on.
    public var mayPublish: Bool {
        guard status == .joined, let index = mySeat else { return false }
        return !seats[index].muted && seats[index].micOn
    }

    /// The member with this id, if known.
    public func member(_ id: String) -> Member? { members.first { $0.id == id } }
}
