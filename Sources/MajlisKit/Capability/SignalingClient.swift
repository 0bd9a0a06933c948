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
}
