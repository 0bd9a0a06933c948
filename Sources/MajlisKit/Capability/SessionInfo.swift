import MajlisProtocol

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

extension SessionInfo {
    /// Reads the `data` of a `hello` answer (docs/protocol.md section 4); nil when it names no
    /// session or user. The heartbeat is kept within 1 s to an hour.
    public init?(hello data: JSONValue) {
        guard let session = data["session"]?.stringValue, let id = data["user"]?["id"]?.stringValue else { return nil }
        self.init(
            session: session, userId: id, userName: data["user"]?["name"]?.stringValue ?? id,
            heartbeat: Int(min(max(data["heartbeat"]?.intValue ?? 20, 1), 3_600)), expiresAt: data["expiresAt"]?.intValue ?? 0,
            resumed: data["resumed"]?.boolValue ?? false, rooms: data["rooms"]?.arrayValue?.compactMap(\.stringValue) ?? [],
            nodes: data["nodes"]?.arrayValue?.compactMap { $0["signaling"]?.stringValue } ?? [])
    }
}
