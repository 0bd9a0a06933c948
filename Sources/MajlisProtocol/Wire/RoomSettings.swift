/// The settings a room is created with (`room.create`, or `room.join` with `create`).
public struct RoomSettings: Sendable, Equatable {
    public var title: String
    /// 1 ... 64.
    public var seatCount: Int
    public var mode: RoomMode
    public var announcement: String
    /// 0 means the server's limit.
    public var maxMembers: Int

    public init(title: String = "", seatCount: Int = 8, mode: RoomMode = .free, announcement: String = "", maxMembers: Int = 0) {
        self.title = title
        self.seatCount = seatCount
        self.mode = mode
        self.announcement = announcement
        self.maxMembers = maxMembers
    }

    /// The range `seatCount` must fall in.
    public static let seatCountRange = 1...64
}
