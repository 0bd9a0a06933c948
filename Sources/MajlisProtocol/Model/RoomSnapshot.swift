/// The whole room as one member sees it: the data of `room.join` and `room.sync`.
public struct RoomSnapshot: Sendable, Codable, Equatable {
    /// The `chat` part of a snapshot.
    public struct ChatState: Sendable, Codable, Equatable {
        public var lastMsgId: Int64
        public init(lastMsgId: Int64) { self.lastMsgId = lastMsgId }
    }

    public var room: RoomInfo
    /// The last room event this snapshot includes.
    public var seq: Int64
    /// Exactly `room.seatCount` entries.
    public var seats: [Seat]
    /// Owner, admins and seated users first, then up to 100 others.
    public var members: [Member]
    public var attributes: [String: AttributeValue]
    public var me: SelfState
    /// Pending requests; empty unless the caller moderates the room.
    public var requests: [SeatRequest]
    public var chat: ChatState
    /// Where and how to send media; absent until the media plane is enabled.
    public var media: JSONValue?

    public init(
        room: RoomInfo, seq: Int64, seats: [Seat], members: [Member], attributes: [String: AttributeValue],
        me: SelfState, requests: [SeatRequest], chat: ChatState, media: JSONValue? = nil
    ) {
        self.room = room
        self.seq = seq
        self.seats = seats
        self.members = members
        self.attributes = attributes
        self.me = me
        self.requests = requests
        self.chat = chat
        self.media = media
    }
}
