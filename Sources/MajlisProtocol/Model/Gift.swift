/// A gift the app's backend posted in a room (`gift.send`, section 19): `count` of item `item`
/// of gift pack `pack` from user `from` to user `to` (on seat `index` when it was sent to a seat).
public struct Gift: Sendable, Codable, Equatable {
    public var from: String
    /// The giver's display name as the room knew it (their id when they were not in the room).
    public var fromName: String
    public var to: String
    public var index: Int?
    public var pack: String
    public var item: String
    public var count: Int
    /// When the room took it, Unix ms.
    public var ts: Int64

    /// How many of one item a gift may hold.
    public static let counts = 1...10_000

    public init(from: String, fromName: String, to: String, index: Int?, pack: String, item: String, count: Int, ts: Int64) {
        self.from = from
        self.fromName = fromName
        self.to = to
        self.index = index
        self.pack = pack
        self.item = item
        self.count = count
        self.ts = ts
    }
}
