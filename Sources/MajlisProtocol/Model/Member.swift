/// A member of a room as clients see it.
public struct Member: Sendable, Codable, Equatable {
    public var id: String
    public var name: String
    public var avatar: String
    public var role: Role
    public var seat: Int?
    public var chatMuted: Bool
    /// Unix milliseconds.
    public var joinedAt: Int64
    /// True when the member refused to be handed the room (`member.update` `refuseOwnership`);
    /// absent otherwise.
    public var refusesOwnership: Bool?

    public init(
        id: String, name: String, avatar: String, role: Role, seat: Int?, chatMuted: Bool, joinedAt: Int64, refusesOwnership: Bool? = nil
    ) {
        self.id = id
        self.name = name
        self.avatar = avatar
        self.role = role
        self.seat = seat
        self.chatMuted = chatMuted
        self.joinedAt = joinedAt
        self.refusesOwnership = refusesOwnership
    }
}
