/// One node of a cluster as it reports itself in the registry (`GET /v1/nodes`): where members
/// reach it and how loaded it is.
public struct NodeInfo: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
        /// Serves its rooms and takes new ones.
        case active
        /// Gives its rooms to other nodes and takes none (`majlis admin drain`, or stopping).
        case draining
    }

    /// The node's id (`majlis serve --node`).
    public var id: String
    /// The process behind it: a node restarted under the same id is a new instance.
    public var instance: String
    /// Where clients reach its signaling (`ws://HOST:PORT/v1/signal`) and send it media (`HOST:PORT`).
    public var signaling: String
    public var media: String
    public var state: State
    /// Rooms in its memory and members in them (connected or waiting to resume).
    public var rooms: Int
    public var members: Int
    /// Media packets it forwarded per second over the last report interval.
    public var packetsPerSecond: Double
    /// Processor time it used over the last report interval, in cores (1.0: one core's worth).
    public var cpu: Double
    /// Unix milliseconds: when the process started, and when this report was made.
    public var startedAt: Int64
    public var reportedAt: Int64

    public init(
        id: String, instance: String, signaling: String, media: String, state: State, rooms: Int, members: Int, packetsPerSecond: Double,
        cpu: Double, startedAt: Int64, reportedAt: Int64
    ) {
        self.id = id
        self.instance = instance
        self.signaling = signaling
        self.media = media
        self.state = state
        self.rooms = rooms
        self.members = members
        self.packetsPerSecond = packetsPerSecond
        self.cpu = cpu
        self.startedAt = startedAt
        self.reportedAt = reportedAt
    }
}
