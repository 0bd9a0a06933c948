import MajlisProtocol

/// The signaling capability (the "RTM" role of seed 000): requests with answers, server events,
/// connection state. The business layer sees only this protocol; `LiveSignalingClient` talks to
/// a Majlis server, `FakeSignalingClient` is for tests.
public protocol SignalingClient: AnyObject, Sendable {
    /// A new stream of everything that happens from now on. Each call gets its own stream.
    func subscribe() -> AsyncStream<SignalingEvent>

    /// The session of the current (or last) connection.
    var currentSession: SessionInfo? { get }

    /// Connects and says `hello`.
    func connect() async throws(MajlisError) -> SessionInfo

    /// Sends one request and returns its `data`. Retries (up to 3 tries in all, the same `rid`)
    /// when no answer comes in time, so a retry never doubles a change; waits through a
    /// reconnect. Throws `.server` when the server refuses.
    func request(_ op: String, _ args: [String: JSONValue]) async throws(MajlisError) -> JSONValue

    /// Hands the session a new access token (after `token.expiring`).
    func renew(token: String) async throws(MajlisError)

    /// Leaves every room (`bye`) and closes.
    func disconnect() async

    /// Where the client is connected, or connects next.
    var currentURL: String { get }

    /// Takes the session to another node of the cluster (the one a room is on, as a `conflict`
    /// names it): the connection closes and opens there, as a reconnect does, falling back to
    /// the other nodes when that one cannot be reached. Returns where it is connected then.
    /// Requests made meanwhile wait for it.
    func move(to url: String) async throws(MajlisError) -> String
}

extension SignalingClient {
    public var currentURL: String { "" }

    public func move(to url: String) async throws(MajlisError) -> String {
        throw MajlisError.misuse("this signaling client cannot move to another node")
    }
}
