/// A pending request to speak.
public struct SeatRequest: Sendable, Codable, Equatable {
    public var id: String
    public var user: String
    /// The seat asked for, if any.
    public var index: Int?
    /// Unix milliseconds.
    public var createdAt: Int64

    public init(id: String, user: String, index: Int?, createdAt: Int64) {
        self.id = id
        self.user = user
        self.index = index
        self.createdAt = createdAt
    }
}
