import MajlisRoom

/// Everything `majlis serve` can be told.
public struct ServerConfig: Sendable {
    /// Where signaling and HTTP listen. Port 0 picks a free one.
    public var host = "127.0.0.1"
    public var port = 7880
    /// The UDP media address (reserved for the media plane) and what clients are told to use.
    public var mediaHost = "127.0.0.1"
    public var mediaPort = 7882
    public var mediaAdvertise: String?
    /// The directory of the SQLite database (with `postgresURL`, of this node's DTLS certificate
    /// and development secret only).
    public var dataDirectory = "./majlis-data"
    /// PostgreSQL to keep the store in instead of SQLite (`postgres://user@host:port/database`).
    public var postgresURL: String?
    /// Redis holding the cluster's registry of nodes (`redis://[:PASSWORD@]HOST:PORT[/DB]`): this
    /// server is then a node of a cluster, `node` its id.
    public var redisURL: String?
    /// What the nodes of the cluster sign their registry entries with (`ClusterSeal`); nil: a
    /// secret derived from `keys`.
    public var clusterSecret: String?
    /// What other nodes and clients are told this node's signaling is (`wss://node1.example.com/v1/signal`);
    /// nil: the address it listens on.
    public var signalingAdvertise: String?
    /// API keys: `kid` -> HS256 secret.
    public var keys: [String: String] = [:]
    /// Seconds a dropped user's seat and membership wait for `resume`.
    public var resumeGrace = 30
    /// Seconds between client pings; a connection silent for twice this is dropped.
    public var heartbeat = 20
    /// Whether the thread that forwards voice asks for real-time scheduling (where the process
    /// may; ordinary again while it takes over half a core).
    public var mediaRealtime = false
    /// Seconds a new connection has to send `hello`.
    public var helloTimeout = 10
    /// Seconds a `rid` is remembered.
    public var ridLifetime = 120
    public var tlsCertificate: String?
    public var tlsKey: String?
    /// Requests per second a connection may make, after a burst.
    public var requestsPerSecond = 50.0
    public var requestBurst = 100
    /// The largest text frame, in bytes.
    public var maxFrameBytes = 65_536
    public var roomLimits = RoomLimits()
    /// Open connections one IP address may have.
    public var maxConnectionsPerAddress = 256
    /// A user is signed in on one device at a time: a `hello` from another device ends the
    /// sessions of the others (`session.ended`, reason `elsewhere`, close 4004).
    public var oneDevicePerUser = false
    /// Seconds an HTTP request may take to arrive, headers and body (408 after).
    public var requestSeconds = 30
    /// Browser origins (`https://app.example.com`) whose pages may open a WebSocket here,
    /// besides the server's own; `*` lets any in.
    public var allowedOrigins: [String] = []
    /// The app's URL that hands the web app a token (`{"token": ...}` for a GET with the app's
    /// cookies; docs/web.md), if it has one.
    public var tokenURL: String?
    /// Rooms one user may own (a server admin's token is not limited), created or handed over.
    public var maxRoomsPerUser = 20
    /// Rooms one user may be in at once.
    public var maxRoomsPerConnection = 10
    /// Members a conversation group may have, its owner included.
    public var maxGroupMembers = 500
    /// Seconds after sending in which a message's sender may revoke it, and edit its text.
    public var revokeSeconds = 120
    public var editSeconds = 900
    /// Messages one may send to a user who has not written back and shares no group with them.
    public var strangerMessages = 3
    /// Whether a stranger's message past `strangerMessages` is held for the app's backend to
    /// review (`hold`) rather than refused (`refuse`).
    public var strangerOverflow = "refuse"
    /// WebRTC offers a connection may send per second, after a burst of `offerBurst`.
    public var offersPerSecond = 1.0
    public var offerBurst = 5
    /// Bytes of answers to reads a connection may be sent a second, after a burst
    /// (`SessionState.Limits.answerBytesPerSecond`).
    public var answerBytesPerSecond = 1 << 20
    public var answerBurstBytes = 8 << 20
    /// Chat history kept: at most this many messages per room, none older than this many days.
    public var historyMessages = 10_000
    public var historyDays = 90
    /// Seconds an empty room with nothing pending stays in memory (it comes back from the store).
    public var idleRoomSeconds = 60
    /// This server's name in `hello` answers, and its id as a node of a cluster.
    public var node = "majlis-1"
    /// A folder to serve the web app from (index.html, console.html, app/), as its files are
    /// now; nil: the copy built into the binary.
    public var webDirectory: String?
    /// A file to serve as the server API's OpenAPI document at `/v1/openapi.yaml`; nil: the copy of
    /// docs/openapi.yaml built into the binary.
    public var apiDocument: String?
    /// Where events are posted (none by default).
    public var webhooks = WebhookSettings()
    /// In development mode, the API key (`kid`) the web app's `GET /v1/dev/token` signs with;
    /// nil: that endpoint does not exist.
    public var developmentKey: String?

    public init() {}
}

extension ServerConfig {
    /// What bounds each session.
    var sessionLimits: SessionState.Limits {
        var limits = SessionState.Limits(
            requestsPerSecond: requestsPerSecond, requestBurst: requestBurst, chatPerSecond: roomLimits.chatPerSecond, chatBurst: roomLimits.chatBurst,
            offersPerSecond: offersPerSecond, offerBurst: offerBurst, helloTimeout: helloTimeout, heartbeat: heartbeat)
        limits.answerBytesPerSecond = answerBytesPerSecond
        limits.answerBurstBytes = answerBurstBytes
        return limits
    }
}
