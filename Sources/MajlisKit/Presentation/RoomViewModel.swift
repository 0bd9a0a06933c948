/// Everything the room screen draws, already worded in the user's language.
public struct RoomViewModel: Sendable, Equatable {
    public var title: String
    /// Member count and room mode, e.g. "12 members · Ask to speak".
    public var subtitle: String
    public var announcement: String
    /// Lay the screen out right to left (Arabic).
    public var isRightToLeft: Bool
    public var seats: [SeatTile]
    /// Chat messages with join and leave notices between them, oldest first.
    public var chat: [ChatRow]
    /// Known members: hosts, admins, then the rest.
    public var members: [MemberRow]
    /// Shown to the owner and admins only.
    public var requests: [RequestRow]
    public var banners: [Banner]
    /// What this user may do now.
    public var canTakeSeat: Bool
    public var canRequestSeat: Bool
    public var canSendChat: Bool
}
