#if os(Linux)
import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// The signaling capability over a real Majlis server, on libwebsockets (Linux; an Apple-platform
/// client over URLSessionWebSocketTask is not written yet, and the rest of MajlisKit does not
/// depend on this file).
///
/// - Requests time out after `requestTimeout` and are retried, up to 3 tries in all, with the
///   same `rid`, so a retry never doubles a chat message or a seat change.
/// - It pings every half heartbeat; two unanswered pings count as a dead connection.
/// - When the connection drops it reconnects with backoff (the first try within 50 ms when the
///   server closed with 1001, going away) and `resume`, and reports
///   `.reconnected`; requests made meanwhile wait for it. Close codes 4001 (token), 4003
///   (kicked) and 4004 (replaced) end the session instead.
/// - Where the server is a node of a cluster, its `hello` and `ping` answers name the live
///   nodes: a reconnect that cannot reach its node tries the others at once (each round of the
///   backoff goes through them all), and `move(to:)` takes the session to the node a room is on.
///
/// Thread-safe: all state is behind one lock; callbacks come on the socket thread.
public final class LiveSignalingClient: SignalingClient, WebSocketDelegate, @unchecked Sendable {
    // Audited: every mutable field is inside `state`; the rest is immutable.

    /// How the client behaves; the defaults suit phones on weak networks.
    public struct Options: Sendable {
        /// Milliseconds to wait for one answer before trying again.
        public var requestTimeout: Int64 = 5_000
        /// Tries per request (first send included).
        public var maxTries = 3
        /// Reconnect delays in milliseconds; the last one repeats.
        public var backoff: [Int64] = [250, 500, 1_000, 2_000, 4_000, 8_000]
        /// Give up reconnecting after this many milliseconds.
        public var reconnectFor: Int64 = 120_000
        public var client = HelloArgs.ClientInfo(sdk: "majlis-swift", version: "0.1.0", platform: LiveSignalingClient.platform)
        /// A PEM file holding a server certificate to trust over `wss` besides those the system's
        /// certificate authorities vouch for (a development server's self-signed one). Any other
        /// certificate, or one for another host, fails the connection before the token is sent.
        public var trustedCertificate: String?
        public init() {}
    }

    static let platform: String = {
        #if os(Linux)
        return "linux"
        #elseif os(iOS)
        return "ios"
        #elseif os(macOS)
        return "macos"
        #else
        return "other"
        #endif
    }()

    private enum Phase { case idle, connecting, open, reconnecting, closed }

    private enum Answer: Sendable {
        case data(JSONValue)
        case failure(MajlisError)
        /// The connection went away before the answer: send again once reconnected.
        case lost
        case timeout
    }

    private struct State {
        var token: String
        /// Where the next connection goes, and the nodes to try when it cannot (the first URL
        /// given, then those the cluster named).
        var url: String
        var candidates: [String]
        var phase: Phase = .idle
        var connection: WebSocketConnection?
        var session: SessionInfo?
        var nextId: Int64 = 0
        var pending: [Int64: CheckedContinuation<Answer, Never>] = [:]
        var helloId: Int64?
        var openWaiters: [UUID: CheckedContinuation<Bool, Never>] = [:]
        var subscribers: [UUID: AsyncStream<SignalingEvent>.Continuation] = [:]
        var missedPings = 0
        var tasks: [Task<Void, Never>] = []
        var closeInfo: (code: UInt16?, reason: String)?
        /// Why a connection being opened closed before `open` took it as the current one (the
        /// service thread can be that quick: a wrong path's 404 under load).
        var earlyClose: (connection: ObjectIdentifier, info: (code: UInt16?, reason: String))?
    }

    /// The server first given.
    public let url: String
    private let options: Options
    private let clock: any KitClock
    private let logger: Logger
    private let state: Mutex<State>

    private static let sharedSocketClient = Mutex<WebSocketClient?>(nil)

    /// One socket thread serves every client of the process.
    static func socketClient() throws(MajlisError) -> WebSocketClient {
        do {
            return try sharedSocketClient.withLock { client in
                if let client { return client }
                let made = try WebSocketClient()
                client = made
                return made
            }
        } catch {
            throw MajlisError.misuse("cannot start the WebSocket client: \(error)")
        }
    }

    /// A client for the server at `url` (`ws://host:port/v1/signal`) with an access token.
    public init(url: String, token: String, options: Options = Options(), clock: any KitClock = SystemClock(), logger: Logger = .silent) {
        self.url = url
        self.options = options
        self.clock = clock
        self.logger = logger
        self.state = Mutex(State(token: token, url: url, candidates: [url]))
    }

    // MARK: SignalingClient

    public var currentSession: SessionInfo? { state.withLock { $0.session } }

    public var currentURL: String { state.withLock { $0.url } }

    public func move(to url: String) async throws(MajlisError) -> String {
        let connection: WebSocketConnection? = try state.withLock { state throws(MajlisError) in
            guard state.phase == .open || state.phase == .reconnecting || state.phase == .connecting else { throw MajlisError.notConnected }
            guard state.url != url || state.phase != .open else { return nil }
            state.url = url
            state.candidates.removeAll { $0 == url }
            state.candidates.insert(url, at: 0)
            let current = state.connection
            state.connection = nil
            if state.phase == .open { state.phase = .reconnecting }
            return current
        }
        if let connection {
            logger.info("moving to \(url)")
            connection.close(code: 1000, reason: "moving to another node")
            failPending(with: nil)
            broadcast(.connectionLost(reason: "moving to \(url)"))
            reconnect(at: 0)
        }
        guard await waitUntilOpen() else {
            let closed = state.withLock { $0.closeInfo }
            throw closed.map { MajlisError.closed(code: $0.code, reason: $0.reason) } ?? .notConnected
        }
        return currentURL
    }

    public func subscribe() -> AsyncStream<SignalingEvent> {
        let (stream, continuation) = AsyncStream<SignalingEvent>.makeStream()
        let id = UUID()
        state.withLock { $0.subscribers[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    public func connect() async throws(MajlisError) -> SessionInfo {
        let start: Bool = state.withLock { state in
            guard state.phase == .idle || state.phase == .closed else { return false }
            state.phase = .connecting
            state.closeInfo = nil
            return true
        }
        guard start else { throw MajlisError.misuse("connect() called twice") }
        switch await open(reconnecting: false) {
        case .success(let info):
            return info
        case .failure(let error):
            state.withLock { $0.phase = .closed }
            throw error
        }
    }

    public func request(_ op: String, _ args: [String: JSONValue]) async throws(MajlisError) -> JSONValue {
        let rid = UUID().uuidString
        var tries = 0
        let giveUp = clock.now() + options.reconnectFor
        while true {
            guard await waitUntilOpen() else {
                let closed = state.withLock { $0.closeInfo }
                throw closed.map { MajlisError.closed(code: $0.code, reason: $0.reason) } ?? .notConnected
            }
            switch await send(op, args, rid: rid) {
            case .data(let data):
                return data
            case .failure(let error):
                throw error
            case .timeout:
                tries += 1
                logger.debug("\(op): no answer (try \(tries) of \(options.maxTries))")
                if tries >= options.maxTries { throw MajlisError.timedOut(op: op) }
            case .lost:
                if clock.now() > giveUp { throw MajlisError.timedOut(op: op) }
            }
        }
    }

    public func renew(token: String) async throws(MajlisError) {
        state.withLock { $0.token = token }
        _ = try await request("session.renew", ["token": .string(token)])
    }

    public func disconnect() async {
        let wasOpen = state.withLock { state -> Bool in
            let open = state.phase == .open
            state.phase = .closed
            state.closeInfo = (1000, "bye")
            return open
        }
        if wasOpen { _ = await send("bye", [:], rid: nil) }
        let (connection, tasks, waiters) = state.withLock { state in
            let result = (state.connection, state.tasks, Array(state.openWaiters.values))
            state.connection = nil
            state.tasks = []
            state.openWaiters = [:]
            return result
        }
        tasks.forEach { $0.cancel() }
        waiters.forEach { $0.resume(returning: false) }
        connection?.close(code: 1000, reason: "bye")
        failPending(with: .closed(code: 1000, reason: "bye"))
        broadcast(.closed(code: 1000, reason: "bye"))
        finishSubscribers()
    }

    // MARK: Connection

    /// Opens a socket and says hello; on success the phase is `.open`.
    private func open(reconnecting: Bool) async -> Result<SessionInfo, MajlisError> {
        let socketClient: WebSocketClient
        do {
            socketClient = try Self.socketClient()
        } catch {
            return .failure(error)
        }
        let connection: WebSocketConnection
        do {
            connection = try socketClient.connect(url: state.withLock { $0.url }, delegate: self, trusting: options.trustedCertificate)
        } catch {
            return .failure(.misuse("\(error)"))
        }
        state.withLock { state in
            state.connection = connection
            if let early = state.earlyClose, early.connection == ObjectIdentifier(connection) { state.closeInfo = early.info }
            state.earlyClose = nil
        }
        let (token, resume, id) = state.withLock { state -> (String, String?, Int64) in
            state.nextId += 1
            state.helloId = state.nextId
            return (state.token, state.session?.session, state.nextId)
        }
        var args: [String: JSONValue] = ["token": .string(token)]
        if let resume { args["resume"] = .string(resume) }
        if let client = try? JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(options.client)) { args["client"] = client }
        // The hello goes out once the socket opens (the connection queues it).
        let hello = RequestEncoder.frame(id: id, op: "hello", args: args)
        let answer = await awaitAnswer(id: id, timeout: options.requestTimeout * 2, on: connection) { connection.send(hello) }
        switch answer {
        case .data(let data):
            guard let info = Self.sessionInfo(data) else {
                connection.close(code: 1000, reason: "bad hello answer")
                return .failure(.invalidResponse("hello: \(data)"))
            }
            let heartbeat = Int64(max(1, info.heartbeat)) * 1000
            let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                // A session of another node is not resumed here: it is a new one.
                state.session = info
                for node in info.nodes where !state.candidates.contains(node) { state.candidates.append(node) }
                state.phase = .open
                state.missedPings = 0
                let waiters = Array(state.openWaiters.values)
                state.openWaiters = [:]
                return waiters
            }
            startHeartbeat(every: heartbeat / 2, connection: connection)
            broadcast(reconnecting ? .reconnected(info) : .connected(info))
            waiters.forEach { $0.resume(returning: true) }
            return .success(info)
        case .failure(let error):
            connection.close(code: 1000, reason: "hello refused")
            return .failure(error)
        case .lost:
            let closed = state.withLock { $0.closeInfo }
            return .failure(closed.map { .closed(code: $0.code, reason: $0.reason) } ?? .notConnected)
        case .timeout:
            connection.close(code: 1000, reason: "hello timed out")
            return .failure(.timedOut(op: "hello"))
        }
    }

    /// Pings every `interval`. Like `reconnect()`, it holds the client only while it acts, not
    /// while it waits: an app that drops a client lets it go.
    private func startHeartbeat(every interval: Int64, connection: WebSocketConnection) {
        let clock = clock
        let task = Task { [weak self] in
            while !Task.isCancelled {
                do { try await clock.sleep(milliseconds: interval) } catch { return }
                guard let self, self.state.withLock({ $0.connection === connection && $0.phase == .open }) else { return }
                switch await self.send("ping", [:], rid: nil, timeout: interval) {
                case .data(let pong):
                    // A cluster's answer lists its live nodes: the ones that joined since `hello` too.
                    let nodes = pong["nodes"]?.arrayValue?.compactMap { $0["signaling"]?.stringValue } ?? []
                    self.state.withLock { state in
                        state.missedPings = 0
                        for node in nodes where !state.candidates.contains(node) { state.candidates.append(node) }
                    }
                case .timeout:
                    let missed = self.state.withLock { state -> Int in
                        state.missedPings += 1
                        return state.missedPings
                    }
                    if missed >= 2 {
                        self.logger.info("no answer to two pings: the connection is dead")
                        connection.close(code: 1001, reason: "heartbeat")
                        self.connectionEnded(connection, code: nil, reason: "heartbeat lost")
                        return
                    }
                case .failure, .lost: return
                }
            }
        }
        state.withLock { $0.tasks.append(task) }
    }

    /// Connects again, after `firstDelay` ms and then the backoff's delays; each round tries
    /// the current node first, then every other node the cluster named, at once.
    private func reconnect(at firstDelay: Int64? = nil) {
        let (clock, options) = (clock, options)
        let task = Task { [weak self] in
            let started = clock.now()
            var attempt = 0
            var round = 0
            var tried = 0
            while !Task.isCancelled {
                if tried == 0 {
                    let delay = round == 0 ? firstDelay ?? options.backoff[0] : options.backoff[min(round, options.backoff.count - 1)]
                    round += 1
                    do { try await clock.sleep(milliseconds: delay) } catch { return }
                }
                attempt += 1
                guard let self, self.state.withLock({ $0.phase == .reconnecting }) else { return }
                switch await self.open(reconnecting: true) {
                case .success: return
                case .failure(let error):
                    self.logger.info("reconnect attempt \(attempt) (\(self.currentURL)) failed: \(error)")
                    // The next node of the cluster, at once, until every one was tried this round.
                    tried = self.state.withLock { state in
                        guard let index = state.candidates.firstIndex(of: state.url), state.candidates.count > 1 else { return 0 }
                        state.url = state.candidates[(index + 1) % state.candidates.count]
                        return (tried + 1) % state.candidates.count
                    }
                    if case .closed(let code, let reason) = error, let code, Self.isFinal(code) {
                        self.finish(code: code, reason: reason)
                        return
                    }
                    if case .server = error {
                        self.finish(code: CloseCode.unauthorized.rawValue, reason: "\(error)")
                        return
                    }
                    if clock.now() - started > options.reconnectFor {
                        self.finish(code: nil, reason: "could not reconnect")
                        return
                    }
                }
            }
        }
        state.withLock { $0.tasks.append(task) }
    }

    static func isFinal(_ code: UInt16) -> Bool { [CloseCode.unauthorized, .kicked, .replaced].contains { $0.rawValue == code } }

    /// The current connection ended: end the session on a final code, otherwise reconnect.
    private func connectionEnded(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        let action: Int? = state.withLock { state in
            // One already replaced (a move, a heartbeat that gave up on it) ends late: what is
            // pending now belongs to its successor.
            guard state.connection === connection else { return nil }
            state.connection = nil
            if state.phase == .closed { return 0 }
            if let code, Self.isFinal(code) { return 2 }
            if state.phase == .open {
                state.phase = .reconnecting
                return 1
            }
            return 0
        }
        guard let action else { return }
        failPending(with: nil)
        switch action {
        case 1:
            logger.info("connection lost (\(reason)); reconnecting")
            broadcast(.connectionLost(reason: reason))
            // A server that says it goes away (it stops, or its node hands the room to another)
            // is left at once, for another node or for it to send the room on: within 50 ms, so
            // a whole room does not arrive in the same instant.
            reconnect(at: code == CloseCode.goingAway.rawValue ? Int64.random(in: 0...50) : nil)
        case 2:
            finish(code: code, reason: reason)
        default:
            break
        }
    }

    private func finish(code: UInt16?, reason: String) {
        let (tasks, waiters) = state.withLock { state in
            state.phase = .closed
            state.closeInfo = (code, reason)
            let result = (state.tasks, Array(state.openWaiters.values))
            state.tasks = []
            state.openWaiters = [:]
            return result
        }
        tasks.forEach { $0.cancel() }
        waiters.forEach { $0.resume(returning: false) }
        failPending(with: .closed(code: code, reason: reason))
        broadcast(.closed(code: code, reason: reason))
        finishSubscribers()
    }

    // MARK: Requests

    /// Sends once and waits for the answer or the timeout.
    private func send(_ op: String, _ args: [String: JSONValue], rid: String?, timeout: Int64? = nil) async -> Answer {
        let (connection, id) = state.withLock { state -> (WebSocketConnection?, Int64) in
            state.nextId += 1
            return (state.connection, state.nextId)
        }
        guard let connection else { return .lost }
        let frame = RequestEncoder.frame(id: id, op: op, args: args, rid: rid)
        return await awaitAnswer(id: id, timeout: timeout ?? options.requestTimeout, on: connection) { connection.send(frame) }
    }

    /// Registers for the answer to `id`, then runs `send`, then waits (at most `timeout`). If the
    /// connection is already gone, the answer is `.lost` at once.
    private func awaitAnswer(id: Int64, timeout: Int64, on connection: WebSocketConnection, send: @escaping @Sendable () -> Void) async -> Answer {
        // Like the heartbeat, the timer holds the client only once it fires.
        let clock = clock
        let timer = Task { [weak self] in
            do { try await clock.sleep(milliseconds: timeout) } catch { return }
            self?.state.withLock { $0.pending.removeValue(forKey: id) }?.resume(returning: .timeout)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            state.withLock { $0.pending[id] = continuation }
            send()
            if connection.isClosed { state.withLock { $0.pending.removeValue(forKey: id) }?.resume(returning: .lost) }
        }
    }

    /// Resolves every waiting request: with `error`, or as lost (to be sent again) when nil.
    private func failPending(with error: MajlisError?) {
        let waiting = state.withLock { state in
            let all = Array(state.pending.values)
            state.pending = [:]
            return all
        }
        for continuation in waiting { continuation.resume(returning: error.map { .failure($0) } ?? .lost) }
    }

    /// Waits until the connection is open; false when it is closed for good.
    private func waitUntilOpen() async -> Bool {
        let id = UUID()
        return await withCheckedContinuation { continuation in
            let now: Bool? = state.withLock { state in
                switch state.phase {
                case .open: return true
                case .closed, .idle: return false
                case .connecting, .reconnecting:
                    state.openWaiters[id] = continuation
                    return nil
                }
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    // MARK: Events

    private func broadcast(_ event: SignalingEvent) {
        for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber.yield(event) }
    }

    private func finishSubscribers() {
        for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber.finish() }
    }

    static func sessionInfo(_ data: JSONValue) -> SessionInfo? {
        guard let session = data["session"]?.stringValue, let id = data["user"]?["id"]?.stringValue else { return nil }
        return SessionInfo(
            session: session, userId: id, userName: data["user"]?["name"]?.stringValue ?? id,
            heartbeat: Int(min(max(data["heartbeat"]?.intValue ?? 20, 1), 3_600)), expiresAt: data["expiresAt"]?.intValue ?? 0,
            resumed: data["resumed"]?.boolValue ?? false, rooms: data["rooms"]?.arrayValue?.compactMap(\.stringValue) ?? [],
            nodes: data["nodes"]?.arrayValue?.compactMap { $0["signaling"]?.stringValue } ?? [])
    }

    // MARK: WebSocketDelegate (socket thread)

    public func webSocketDidOpen(_ connection: WebSocketConnection) {}

    public func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {
        guard state.withLock({ $0.connection === connection }) else { return }
        guard let frame = ServerFrame(parsing: message) else {
            logger.warning("unreadable frame from the server")
            return
        }
        switch frame {
        case .event(let name, let value):
            guard let event = try? JSONValueDecoder().decode(EventFrame.self, from: value) else {
                logger.warning("unreadable event \(name)")
                return
            }
            broadcast(.event(event))
        case .answer(let re, let outcome):
            let answer: Answer
            switch outcome {
            case .success(let data): answer = .data(data)
            case .failure(let error): answer = .failure(.server(error))
            }
            state.withLock { $0.pending.removeValue(forKey: re) }?.resume(returning: answer)
        }
    }

    public func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        var info: (code: UInt16?, reason: String)?
        if let code, Self.isFinal(code) { info = (code, reason) }
        if code == nil, let problem = connection.rejectedCertificate {
            info = (nil, "the server's certificate is not trusted (\(problem))")
        } else if code == nil, reason.hasPrefix("HS:") {
            // A server answered the HTTP request, but not with a WebSocket: a wrong path or not Majlis.
            info = (nil, "the server answered but is not Majlis signaling at this address (\(reason)); the path is /v1/signal")
        }
        state.withLock { state in
            if state.connection === connection {
                if let info { state.closeInfo = info }
            } else if let info, state.phase == .connecting || state.phase == .reconnecting {
                state.earlyClose = (ObjectIdentifier(connection), info)
            }
        }
        connectionEnded(connection, code: code, reason: reason)
    }
}
#endif
