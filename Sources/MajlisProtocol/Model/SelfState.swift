/// The `me` part of a snapshot: the caller's own standing in the room.
public struct SelfState: Sendable, Codable, Equatable {
    public var role: Role
    public var seat: Int?
    public var chatMuted: Bool
    public var request: SeatRequest?

    public init(role: Role, seat: Int?, chatMuted: Bool, request: SeatRequest?) {
        self.role = role
        self.seat = seat
        self.chatMuted = chatMuted
        self.request = request
    }
}
