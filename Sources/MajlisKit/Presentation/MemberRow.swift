/// One member in the member list: hosts first, then admins, then everyone else in join order.
public struct MemberRow: Sendable, Equatable {
    public var userId: String
    /// The name ("You" for this user).
    public var name: String
    /// "host", "admin" or empty, in the user's language.
    public var mark: String
    /// The seat's number as shown (from 1), when seated.
    public var seatNumber: Int?
    public var isMe: Bool

    public init(userId: String, name: String, mark: String, seatNumber: Int?, isMe: Bool) {
        self.userId = userId
        self.name = name
        self.mark = mark
        self.seatNumber = seatNumber
        self.isMe = isMe
    }
}
