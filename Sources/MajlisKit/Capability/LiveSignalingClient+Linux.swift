#if os(Linux)
import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// The signaling capability over a real Majlis server, on libwebsockets (Linux; an Apple-platform
/// client over URLSessionWebSocketTask is not written yet, and the rest of MajlisKit does not
/// depend on this file). What it decides (retries, heartbeat, reconnect, failover to the
/// cluster's other nodes, close codes) is `SignalingClientCore`'s; this host opens and closes
/// the sockets, carries the frames, wakes the core on the clock and hands each caller its outcome.
///
/// Thread-safe: the core and the host's tables are behind one lock; the core's actions are
/// carried out in order, outside it, by whichever thread finds them queued; callbacks come on
/// the socket thread.
public final class LiveSignalingClient: SignalingClient, Sendable {
    public typealias Options = SignalingClientCore.Options
    private typealias Action = SignalingClientCore.Action
    private typealias Outcome = SignalingClientCore.Outcome

    private struct Host {
        var core: SignalingClientCore
        /// Actions decided and not yet carried out, and whether a thread is carrying them out.
        var outbox: [Action] = []
        var draining = false
        var sockets: [SignalingClientCore.Connection: SocketEvents] = [:]
        var waiters: [SignalingClientCore.Ticket: CheckedContinuation<Outcome, Never>] = [:]
        var nextTicket = 0
        var subscribers: [UUID: AsyncStream<SignalingEvent>.Continuation] = [:]
        /// The task sleeping until the core's next deadline (or an earlier one).
        var timer: (id: Int, deadline: Int64, task: Task<Void, Never>)?
        var timers = 0
    }

    /// One socket's delegate: it tells the client which connection of the core spoke.
    private final class SocketEvents: WebSocketDelegate, Sendable {
        let id: SignalingClientCore.Connection
        weak let client: LiveSignalingClient?
        let socket = Mutex<WebSocketConnection?>(nil)

        init(id: SignalingClientCore.Connection, client: LiveSignalingClient) {
            self.id = id
            self.client = client
        }

        func webSocketDidOpen(_ connection: WebSocketConnection) {}

        func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {
            client?.step { host, now in host.core.received(message, on: id, now: now) }
        }

        func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
            client?.step { host, now in
                host.sockets.removeValue(forKey: id)
                return host.core.closed(id, code: code, reason: reason, certificateProblem: connection.rejectedCertificate, now: now)
            }
        }
    }

    /// The server first given.
    public let url: String
    let options: Options
    private let clock: any KitClock
    private let logger: Logger
    private let host: Mutex<Host>

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
        self.host = Mutex(Host(core: SignalingClientCore(url: url, token: token, options: options)))
    }

    // MARK: SignalingClient

    public var currentSession: SessionInfo? { host.withLock { $0.core.session } }

    public var currentURL: String { host.withLock { $0.core.url } }

    /// The access token of the session (the newest `renew(token:)` gave).
    public var currentToken: String { host.withLock { $0.core.token } }

    public func subscribe() -> AsyncStream<SignalingEvent> {
        let (stream, continuation) = AsyncStream<SignalingEvent>.makeStream()
        let id = UUID()
        host.withLock { $0.subscribers[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.host.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    public func connect() async throws(MajlisError) -> SessionInfo {
        guard case .session(let info) = try await ask({ core, ticket, now in core.connect(ticket, now: now) }) else {
            throw .invalidResponse("connect")
        }
        return info
    }

    public func request(_ op: String, _ args: [String: JSONValue]) async throws(MajlisError) -> JSONValue {
        let rid = UUID().uuidString
        guard case .data(let data) = try await ask({ core, ticket, now in core.request(ticket, op: op, args: args, rid: rid, now: now) }) else {
            throw .invalidResponse(op)
        }
        return data
    }

    public func renew(token: String) async throws(MajlisError) {
        host.withLock { $0.core.renew(token: token) }
        _ = try await request("session.renew", ["token": .string(token)])
    }

    public func move(to url: String) async throws(MajlisError) -> String {
        guard case .moved(let place) = try await ask({ core, ticket, now in core.move(ticket, to: url, now: now) }) else {
            throw .invalidResponse("move")
        }
        return place
    }

    public func disconnect() async {
        _ = try? await ask { core, ticket, now in core.disconnect(ticket, now: now) }
    }

    // MARK: Host

    /// Registers a caller, hands the core its ticket, and waits for the outcome.
    private func ask(_ input: (inout SignalingClientCore, SignalingClientCore.Ticket, Int64) -> [Action]) async throws(MajlisError) -> Outcome {
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            step { host, now in
                host.nextTicket += 1
                host.waiters[host.nextTicket] = continuation
                return input(&host.core, host.nextTicket, now)
            }
        }
        if case .failure(let error) = outcome { throw error }
        return outcome
    }

    /// Feeds the core one input, under the lock, then carries out what it decided.
    private func step(_ input: (inout Host, Int64) -> [Action]) {
        let now = clock.now()
        let drains = host.withLock { host -> Bool in
            host.outbox += input(&host, now)
            guard !host.draining else { return false }
            host.draining = true
            return true
        }
        guard drains else { return }
        // One thread at a time carries out the actions, in the order they were decided; an
        // action's own input (a socket that cannot open) queues behind them.
        while let actions = host.withLock({ host -> [Action]? in
            guard !host.outbox.isEmpty else {
                host.draining = false
                return nil
            }
            defer { host.outbox = [] }
            return host.outbox
        }) {
            actions.forEach(perform)
        }
        armTimer()
    }

    private func perform(_ action: Action) {
        switch action {
        case .open(let id, let url):
            let events = SocketEvents(id: id, client: self)
            host.withLock { $0.sockets[id] = events }
            do {
                let socket = try Self.socketClient().connect(url: url, delegate: events, trusting: options.trustedCertificate)
                events.socket.withLock { $0 = socket }
            } catch {
                let reason = (error as? MajlisError) ?? .misuse("\(error)")
                step { host, now in
                    host.sockets.removeValue(forKey: id)
                    return host.core.openFailed(id, error: reason, now: now)
                }
            }
        case .send(let id, let frame):
            // The hello goes out once the socket opens (the connection queues it).
            host.withLock { $0.sockets[id] }?.socket.withLock { $0 }?.send(frame)
        case .close(let id, let code, let reason):
            host.withLock { $0.sockets.removeValue(forKey: id) }?.socket.withLock { $0 }?.close(code: code, reason: reason)
        case .resolve(let ticket, let outcome):
            host.withLock { $0.waiters.removeValue(forKey: ticket) }?.resume(returning: outcome)
        case .emit(let event):
            for subscriber in host.withLock({ Array($0.subscribers.values) }) { subscriber.yield(event) }
        case .finish:
            let subscribers = host.withLock { host in
                host.timer?.task.cancel()
                host.timer = nil
                return Array(host.subscribers.values)
            }
            for subscriber in subscribers { subscriber.finish() }
        case .log(let level, let text):
            logger.log(level, text)
        }
    }

    /// Makes sure a task wakes the core by its next deadline. A timer already set for earlier is
    /// kept (it wakes the core for nothing, and is set again then), so a request answered in
    /// time costs no new task.
    private func armTimer() {
        let clock = clock
        host.withLock { host in
            guard let deadline = host.core.nextDeadline, deadline < host.timer?.deadline ?? .max else { return }
            host.timer?.task.cancel()
            host.timers += 1
            let id = host.timers
            // Like the sockets' delegates, the timer holds the client only once it fires: an app
            // that drops a client (without `disconnect()`) lets it go, reconnecting or not.
            let task = Task { [weak self] in
                do { try await clock.sleep(until: deadline) } catch { return }
                self?.step { host, now in
                    if host.timer?.id == id { host.timer = nil }
                    return host.core.tick(now: now)
                }
            }
            host.timer = (id, deadline, task)
        }
    }
}
#endif
