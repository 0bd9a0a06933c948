/// A user and how many gift items they gave or received (`gift.leaders`).
public struct GiftTally: Sendable, Codable, Equatable {
    public var user: String
    public var count: Int64

    public init(user: String, count: Int64) {
        self.user = user
        self.count = count
    }
}
