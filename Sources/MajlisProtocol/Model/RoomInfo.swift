/// The room's own settings and counters (the `room` of a snapshot and of `room.updated`).
public struct RoomInfo: Sendable, Codable, Equatable {
    public var id: String
    public var title: String
    public var owner: String
    public var mode: RoomMode
    public var seatCount: Int
    public var announcement: String
    public var chatMutedAll: Bool
    /// Unix milliseconds.
    public var createdAt: Int64
    public var memberCount: Int
    /// 0 means the server's limit.
    public var maxMembers: Int
    /// True when members may not send seat emoji (`room.emoji`); absent while they may.
    public var emojiOff: Bool?

    public init(
        id: String, title: String, owner: String, mode: RoomMode, seatCount: Int, announcement: String,
        chatMutedAll: Bool, createdAt: Int64, memberCount: Int, maxMembers: Int, emojiOff: Bool? = nil
    ) {
        self.id = id
        self.title = title
        self.owner = owner
        self.mode = mode
        self.seatCount = seatCount
        self.announcement = announcement
        self.chatMutedAll = chatMutedAll
        self.createdAt = createdAt
        self.memberCount = memberCount
        self.maxMembers = maxMembers
        self.emojiOff = emojiOff
    }
}
