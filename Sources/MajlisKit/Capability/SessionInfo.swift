/// What a successful `hello` says.
public struct SessionInfo: Sendable, Equatable {
    public var session: String
    public var userId: String
    public var userName: String
    /// Seconds between pings.
    public var heartbeat: Int
    /// Unix seconds.
    public var expiresAt: Int64
    /// Whether the server handed back the rooms of an earlier connection.
    public var resumed: Bool
    /// The rooms the user is still a member of.
    public var rooms: [String]
    /// Where the live nodes of the server's cluster take connections (empty for a lone server).
    public var nodes: [String]

    public init(
        session: String, userId: String, userName: String, heartbeat: Int, expiresAt: Int64, resumed: Bool, rooms: [String], nodes: [String] = []
    ) {
        self.session = session
        self.userId = userId
        self.userName = userName
        self.heartbeat = heartbeat
        self.expiresAt = expiresAt
        self.resumed = resumed
        self.rooms = rooms
        self.nodes = nodes
    }
}
