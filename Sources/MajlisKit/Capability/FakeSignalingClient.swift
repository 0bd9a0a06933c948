import MajlisProtocol
import Synchronization

/// A signaling client for tests and previews: answers come from `respond`, events are pushed
/// with `emit`, and every request is recorded.
public final class FakeSignalingClient: SignalingClient {
    /// Answers one request: its data, or the server's refusal.
    public typealias Responder = @Sendable (_ op: String, _ args: [String: JSONValue]) -> Result<JSONValue, ProtocolError>

    private struct State {
        var requests: [(op: String, args: [String: JSONValue])] = []
        var subscribers: [Int: AsyncStream<SignalingEvent>.Continuation] = [:]
        var nextSubscriber = 0
        var session: SessionInfo?
        var responder: Responder
        var url = "ws://fake/v1/signal"
        var moves: [String] = []
        var unreachable: Set<String> = []
    }

    private let state: Mutex<State>

    /// A fake whose requests are answered by `respond` (by default: `{}` for everything).
    public init(user: String = "me", respond: @escaping Responder = { _, _ in .success(.object([:])) }) {
        state = Mutex(State(
            session: SessionInfo(session: "fake", userId: user, userName: user, heartbeat: 20, expiresAt: 0, resumed: false, rooms: []),
            responder: respond))
    }

    /// Replaces how requests are answered.
    public func respond(_ responder: @escaping Responder) { state.withLock { $0.responder = responder } }

    /// Nodes `move(to:)` cannot reach: a move there stays where it was.
    public func makeUnreachable(_ urls: Set<String>) { state.withLock { $0.unreachable = urls } }

    /// Where `move(to:)` was asked to go, in order.
    public var moves: [String] { state.withLock { $0.moves } }

    /// The ops requested so far, in order.
    public var ops: [String] { state.withLock { $0.requests.map(\.op) } }

    /// The args of the last request for `op`.
    public func lastArgs(of op: String) -> [String: JSONValue]? {
        state.withLock { $0.requests.last { $0.op == op }?.args }
    }

    /// Pushes an event to every subscriber.
    public func emit(_ event: SignalingEvent) {
        for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber.yield(event) }
    }

    /// Pushes a server event for a room.
    public func emit(_ event: ServerEvent, room: String, seq: Int64? = nil) {
        emit(.event(EventFrame(room: room, seq: seq, event: event)))
    }

    // MARK: SignalingClient

    public var currentSession: SessionInfo? { state.withLock { $0.session } }

    public var currentURL: String { state.withLock { $0.url } }

    public func move(to url: String) async throws(MajlisError) -> String {
        state.withLock { state in
            state.moves.append(url)
            if !state.unreachable.contains(url) { state.url = url }
            return state.url
        }
    }

    public func subscribe() -> AsyncStream<SignalingEvent> {
        let (stream, continuation) = AsyncStream<SignalingEvent>.makeStream()
        state.withLock { state in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
        }
        return stream
    }

    public func connect() async throws(MajlisError) -> SessionInfo {
        let session = state.withLock { $0.session! }
        emit(.connected(session))
        return session
    }

    public func request(_ op: String, _ args: [String: JSONValue]) async throws(MajlisError) -> JSONValue {
        let responder = state.withLock { state in
            state.requests.append((op, args))
            return state.responder
        }
        switch responder(op, args) {
        case .success(let data): return data
        case .failure(let error): throw MajlisError.server(error)
        }
    }

    public func renew(token: String) async throws(MajlisError) {
        _ = try await request("session.renew", ["token": .string(token)])
    }

    public func disconnect() async {
        emit(.closed(code: 1000, reason: "bye"))
    }
}
