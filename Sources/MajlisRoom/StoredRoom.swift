import MajlisProtocol

/// The part of a room that survives restarts: settings, seat locks and mutes, admins, and who
/// sits where. Bans and chat history are stored on their own.
public struct StoredRoom: Sendable, Equatable, Codable {
    public var id: String
    public var title: String
    public var owner: String
    public var mode: RoomMode
    public var seatCount: Int
    public var announcement: String
    public var chatMutedAll: Bool
    public var createdAt: Int64
    public var maxMembers: Int
    public var lockedSeats: [Int]
    public var mutedSeats: [Int]
    public var admins: [String]
    /// Who held each occupied seat (nil or empty: nobody; rooms stored before seats were).
    public var occupants: [Occupant]?
    /// The display names of the people the room names when they may be away: its owner and the
    /// users it bans (user id to name; nil: none known), for consoles and the server API.
    public var names: [String: String]?
    /// True when members may not send seat emoji (nil: they may; rooms stored before there were any).
    public var emojiOff: Bool?

    /// A member on a seat, as the store keeps it: back in the room after a restart or a move to
    /// another node, it holds the seat for the resume grace.
    public struct Occupant: Sendable, Equatable, Codable {
        public var seat: Int
        public var user: String
        public var name: String
        public var avatar: String

        public init(seat: Int, user: String, name: String, avatar: String) {
            self.seat = seat
            self.user = user
            self.name = name
            self.avatar = avatar
        }
    }

    public init(
        id: String, title: String, owner: String, mode: RoomMode, seatCount: Int, announcement: String,
        chatMutedAll: Bool, createdAt: Int64, maxMembers: Int, lockedSeats: [Int], mutedSeats: [Int], admins: [String],
        occupants: [Occupant]? = nil, names: [String: String]? = nil, emojiOff: Bool? = nil
    ) {
        self.id = id
        self.title = title
        self.owner = owner
        self.mode = mode
        self.seatCount = seatCount
        self.announcement = announcement
        self.chatMutedAll = chatMutedAll
        self.createdAt = createdAt
        self.maxMembers = maxMembers
        self.lockedSeats = lockedSeats
        self.mutedSeats = mutedSeats
        self.admins = admins
        self.occupants = occupants
        self.names = names
        self.emojiOff = emojiOff
    }
}
