import Dispatch
import Foundation
import MajlisForwarding
import MajlisProtocol
import MajlisRoom
import MajlisTransport
import Synchronization

/// The signaling server: WebSocket sessions at `/v1/signal` speaking PROTOCOL.md, `GET /healthz`,
/// rooms on their own executors, state in the store.
///
/// Each decoded request is routed by `RequestRouter` and carried out by the handler its route
/// names (`SessionRequests`, `PrecallRequests`, `RoomRequests`; docs/architecture.md).
///
/// Threads: the WebSocket service thread parses frames and answers session ops (`hello`, `ping`,
/// `session.renew`, `bye`); room ops go to the room's queue. Beside it run the services of
/// `services` (the cluster's registry and leases, the media router, webhooks, the `Sweeper`),
/// started after the listening socket and stopped after the sessions, in reverse order.
public final class SignalingServer: WebSocketDelegate, Sendable {
    /// The version reported in `hello` and `/healthz`.
    public static let version = "0.1.0"

    let context: ServerContext
    private let api: ServerAPI
    private let uploads: UploadRequests
    /// Resource packs: the catalogue, the packs, and their uploads (docs/protocol.md section 19).
    private let packs: PackRequests
    let sessions = SessionTable()
    /// Decides where each request goes; the handlers below carry it out.
    private let router: RequestRouter
    private let sessionRequests: SessionRequests
    private let precallRequests: PrecallRequests
    private let roomRequests: RoomRequests
    let messagingRequests: MessagingRequests
    private let webSocket = Mutex<WebSocketServer?>(nil)
    /// What runs beside the signaling loop, started with it and stopped after it (set by `start`).
    private let services = Mutex<ServiceGroup?>(nil)
    private let started = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    /// Whether `stop` has finished, and who waits for it (`run`).
    private let stopped = Mutex<(done: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// Monotonic milliseconds: hello and heartbeat timeouts, when connections last heard their
    /// peer, and the media router's time (consent, overdue packets, reports).
    let monotonic: any MillisecondClock

    /// Opens the store; `start()` then listens. `clock` is wall time (Unix milliseconds) and
    /// `monotonic` monotonic milliseconds; tests give clocks that move only when they say.
    public init(
        config: ServerConfig, logger: Logger = Logger(label: "majlis"), clock: any MillisecondClock = SystemClock(), monotonic: (any MillisecondClock)? = nil
    ) throws {
        self.monotonic = monotonic ?? MonotonicClock()
        var config = config
        config.roomLimits.resumeGrace = Duration.seconds(config.resumeGrace).milliseconds
        // The data directory holds the node's DTLS certificate (and the SQLite store, without PostgreSQL).
        try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
        let store = try config.postgresURL.map { try Store(postgres: $0) } ?? Store(directory: config.dataDirectory)
        let identity = try DTLSIdentity.load(directory: config.dataDirectory)
        let media = try MediaRouter(
            host: config.mediaHost, port: config.mediaPort, advertise: config.mediaAdvertise, identity: identity, realtime: config.mediaRealtime,
            clock: monotonic)
        let redis = try config.redisURL.map { try RedisClient(url: $0) }
        let context = ServerContext(config: config, store: store, media: media, redis: redis, logger: logger, clock: clock)
        self.context = context
        router = RequestRouter(roomsPerConnection: config.maxRoomsPerConnection, roomsPerUser: config.maxRoomsPerUser)
        precallRequests = PrecallRequests(context: context)
        roomRequests = RoomRequests(context: context)
        messagingRequests = MessagingRequests(
            context: context,
            rules: ConversationRules(
                groupSize: config.maxGroupMembers, revokeWindow: Duration.seconds(config.revokeSeconds).milliseconds,
                editWindow: Duration.seconds(config.editSeconds).milliseconds, strangerMessages: config.strangerMessages,
                strangerOverflow: ConversationRules.StrangerOverflow(rawValue: config.strangerOverflow) ?? .refuse))
        sessionRequests = SessionRequests(context: context, sessions: sessions, precall: precallRequests, messaging: messagingRequests)
        api = ServerAPI(context: context, messaging: messagingRequests)
        uploads = UploadRequests(context: context)
        packs = PackRequests(context: context)
    }

    /// The port signaling listens on (after `start`).
    public var port: Int { webSocket.withLock { $0?.port ?? 0 } }

    /// The UDP port media is received on.
    public var mediaPort: Int { context.media.socket.port }

    /// What clients are told to send media to.
    public var mediaAddress: String { context.media.advertised }

    /// The store, for tools and tests.
    public var store: Store { context.store }

    /// Rooms in memory now (idle rooms leave it, and come back from the store when used).
    public var loadedRooms: Int { context.rooms.count }

    /// Whether room `id` is in memory here now.
    public func hasLoaded(_ id: String) -> Bool { context.rooms.all.contains { $0.id == id } }

    /// Rooms the sweeper visits: those with a timer set or nobody in them.
    public var sweptRooms: Int { context.rooms.needingSweep.count }

    /// Open WebSocket connections.
    var connectionCount: Int { sessions.count }

    /// Signaling write delays since the start: answers, and events.
    var writeDelays: (answers: DelayHistogram, events: DelayHistogram) {
        webSocket.withLock { $0?.writeDelays } ?? (answers: DelayHistogram(), events: DelayHistogram())
    }

    /// What the media router counted, for tools and tests.
    public var mediaCounters: MediaCounters { context.media.counted }

    /// Serves until the task running it is cancelled (or `stop()` is called), then stops
    /// gracefully (see `stop()`) and returns. Starts the server first unless `start()` did.
    public func run() async throws {
        if !started.load(ordering: .sequentiallyConsistent) { try start() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = stopped.withLock { state in
                    if !state.done { state.waiting.append(continuation) }
                    return state.done
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            // `stop` waits for rooms and connections: not on the cancelling thread.
            DispatchQueue.global().async { self.stop() }
        }
    }

    /// Starts listening and the sweeper.
    public func start() throws {
        guard !started.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let config = context.config
        var tls: (certificate: String, key: String)?
        if let certificate = config.tlsCertificate, let key = config.tlsKey { tls = (certificate, key) }
        let server: WebSocketServer
        let origins = OriginPolicy(allowed: config.allowedOrigins, developmentMode: config.developmentKey != nil, peers: peerAddresses)
        let routes = routes(origins)
        let limits = WebSocketServer.Limits(
            connectionsPerAddress: config.maxConnectionsPerAddress + Self.httpAllowance, requestSeconds: config.requestSeconds,
            refuseBody: { [api, uploads, packs] request in
                routes.refuseBody(request) {
                    UploadRequests.owns($0.path) ? uploads.refusal($0) : PackRequests.owns($0.path) ? packs.refusal($0) : api.refusal($0)
                }
            },
            bodySink: { [uploads, packs] request in
                guard routes.takesBody(request) else { return nil }
                if UploadRequests.owns(request.path) { return uploads.sink(for: request) }
                return PackRequests.owns(request.path) ? packs.sink(for: request) : nil
            },
            acceptUpgrade: { origin, host in origins.acceptsUpgrade(origin: origin, host: host) }, exempt: nodeAddresses)
        do {
            server = try WebSocketServer(
                host: config.host, port: config.port, tls: tls, maxMessageBytes: config.maxFrameBytes, delegate: self, clock: monotonic,
                limits: limits, http: routes.respond)
        } catch {
            started.store(false, ordering: .sequentiallyConsistent)  // nothing started: it may be tried again
            throw error
        }
        webSocket.withLock { $0 = server }
        roomRequests.listening(on: server)
        let scheme = tls == nil ? "ws" : "wss"
        context.node.listening(signaling: config.signalingAdvertise ?? "\(scheme)://\(config.host):\(server.port)/v1/signal", media: context.media.advertised)
        let services = makeServices()
        self.services.withLock { $0 = services }
        do {
            try services.start()
        } catch {
            server.stop()
            webSocket.withLock { $0 = nil }
            started.store(false, ordering: .sequentiallyConsistent)
            throw error
        }
        // Requests that came while the services started (a node of a cluster joining the
        // registry waits out its own dead entry, up to six seconds) are carried out now.
        context.node.started()
    }

    /// Graceful stop: no new work, every room finishes what it has queued, connections are told
    /// 1001 (up to a second for the close frames to go), the store is flushed; then returns
    /// (a second call returns at once).
    public func stop() {
        guard !stopping.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let services = services.withLock { $0 }
        services?.stop("sweeper")  // a sweep under way finishes before anything it uses stops
        // A node of a cluster hands its rooms over first: leases given back before members
        // are let go, so the node each connects to next opens its room at once.
        context.drain()
        context.handOverRooms(force: true)
        for host in context.rooms.all { host.drain() }
        for session in sessions.all { session.connection.close(code: CloseCode.goingAway.rawValue, reason: "server shutting down") }
        sessions.waitUntilEmpty(before: Date().addingTimeInterval(1))
        webSocket.withLock { server in
            server?.stop()
            server = nil
        }
        roomRequests.stop()
        for host in context.rooms.all { host.drain() }
        services?.stop()
        context.store.flush()
        let waiting = stopped.withLock { state in
            state.done = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    // MARK: HTTP

    /// The cluster's other live nodes' addresses (`ServerContext.isNodeAddress`) and pages (`peerSignaling`).
    private var nodeAddresses: @Sendable (String) -> Bool { { [context] in context.isNodeAddress($0) } }
    private var peerAddresses: @Sendable () -> [String] { { [context] in context.peerSignaling } }

    /// The HTTP side: uploads and media, resource packs, the server API, metrics, health and the web app, in that order.
    private func routes(_ origins: OriginPolicy) -> HTTPRouteTable {
        HTTPRouteTable(routes: [
            .init(name: "uploads", matches: { UploadRequests.owns($0.path) }, takesBody: true) { [uploads, context] exchange in
                guard context.node.isStarted else { return exchange.respond(APIFailure.starting.response) }
                uploads.handle(exchange)
            },
            .init(name: "packs", matches: { PackRequests.owns($0.path) }, takesBody: true) { [packs, context] exchange in
                guard context.node.isStarted else { return exchange.respond(APIFailure.starting.response) }
                packs.handle(exchange)
            },
            .init(name: "api", matches: { ServerAPI.owns($0.path) }, takesBody: true) { [api, context] exchange in
                guard context.node.isStarted else { return exchange.respond(APIFailure.starting.response) }
                api.handle(exchange)
            },
            .init(name: "metrics", matches: { $0.path == "/metrics" && $0.method == "GET" }, takesBody: false) { [weak self] exchange in
                // Off the service thread: it reads the store and every room's counts.
                DispatchQueue.global().async { [weak self] in
                    guard let self else { return exchange.respond(HTTPResponse(status: 503, body: [])) }
                    exchange.respond(HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(self.metrics().utf8)))
                }
            },
            .init(name: "health", matches: { $0.path == "/healthz" && HTTPRouteTable.isRead($0) }, takesBody: false) { [weak self] exchange in
                exchange.respond(self?.health() ?? HTTPResponse(status: 503, body: []))
            },
            .init(name: "web", matches: HTTPRouteTable.isRead, takesBody: false) { [context, peerAddresses] exchange in
                let request = exchange.request
                exchange.respond(
                    context.web.respond(path: request.path, query: WebApp.query(Substring(request.query)), peers: peerAddresses())
                        ?? HTTPResponse(status: 404, body: Array(#"{"error":"not found"}"#.utf8)))
            },
        ], origins: origins)
    }

    /// In a cluster, WebSockets an address may open beyond its limit until their `hello`: the
    /// relay links another node opens at once (a burst of its users joining rooms here), each
    /// counted from its `hello` on against the client's address it states. The limit holds at
    /// `hello` for everyone.
    public static let relayAllowance = 32

    /// Connections of any kind an address may hold beyond its WebSockets: room for API calls
    /// and pages beside a full set of WebSockets (which are then refused with a clear 4008).
    public static let httpAllowance = 32

    /// `GET /healthz`.
    private func health() -> HTTPResponse {
        HTTPResponse(status: 200, body: Array(WireEncoder.encode(HealthReport(context: context, connections: sessions.count, writeDelays: writeDelays))))
    }

    // MARK: WebSocketDelegate (service thread)

    public func webSocketDidOpen(_ connection: WebSocketConnection) {
        let session = Session(connection: connection, now: context.now(), limits: context.config.sessionLimits, frames: Self.decodeQueue)
        let fromAddress = sessions.open(session)
        if stopping.load(ordering: .relaxed) {
            connection.close(code: CloseCode.goingAway.rawValue, reason: "server shutting down")
        } else if fromAddress > context.config.maxConnectionsPerAddress + (context.registry == nil ? 0 : Self.relayAllowance),
            !nodeAddresses(connection.peer)
        {
            connection.close(code: CloseCode.policy.rawValue, reason: "too many connections from your address (at most \(context.config.maxConnectionsPerAddress))")
        }
    }

    public func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {
        // A connection this server is closing carries out nothing more (its close frame, with
        // the reason, is the answer to whatever it still sends).
        guard !connection.isClosed, let session = sessions.session(connection.id) else { return }
        // Every frame counts against the rate, decodable or not, before any work is spent on it.
        let now = context.now()
        switch session.state.withLock({ $0.admit(now: now) }) {
        case .allowed:
            break
        case .refused:
            session.send(WireEncoder.failure(re: RequestDecoder.peekId(message), ProtocolError(.rateLimited, "too many requests")))
            return
        case .abusive:
            connection.close(code: CloseCode.policy.rawValue, reason: "request rate abuse")
            return
        }
        // A large frame is read off the service thread (its decoding costs up to a few
        // milliseconds), and so is every frame of the connection while one is: in order, and
        // without holding up anyone else's I/O.
        let receivedAt = connection.messageReceivedAt
        if message.count > Self.inlineFrameBytes || session.queuedFrames.load(ordering: .acquiring) > 0 {
            session.queuedFrames.add(1, ordering: .relaxed)
            session.frames.async { [self] in
                process(message, session: session, receivedAt: receivedAt)
                session.queuedFrames.subtract(1, ordering: .releasing)
            }
        } else {
            process(message, session: session, receivedAt: receivedAt)
        }
    }

    /// Frames up to this size are decoded on the service thread (a few microseconds).
    static let inlineFrameBytes = 4_096
    /// Where large frames are decoded, each connection's in order (`Session.frames`).
    static let decodeQueue = DispatchQueue(label: "majlis.frames", attributes: .concurrent)

    /// Decodes one admitted frame and carries it out.
    private func process(_ message: Data, session: Session, receivedAt: UInt64) {
        guard !session.connection.isClosed else { return }
        switch RequestDecoder.decode(message) {
        case .invalid(let re, let error):
            // Before `hello` nothing but a valid `hello` is read: a frame that is not one (a
            // mistyped hello keeps its own error) closes the connection.
            if session.claims == nil {
                return reject(session, re: re, error.code == .badRequest ? error : ProtocolError(.unauthorized, "the first request must be hello"))
            }
            session.send(WireEncoder.failure(re: re, error))
        case .request(let request):
            handle(request, frame: message, session: session, receivedAt: receivedAt)
        }
    }

    public func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        guard let session = sessions.close(connection.id) else { return }
        sessionRequests.release(session)
    }

    // MARK: Requests

    private func reject(_ session: Session, re: Int64?, _ error: ProtocolError) {
        session.send(WireEncoder.failure(re: re, error))
        session.connection.close(code: CloseCode.unauthorized.rawValue, reason: error.message)
    }

    /// Carries out `request`, or once the node has started if it has not yet (see `NodeStatus.whenStarted`).
    private func handle(_ request: IncomingRequest, frame: Data, session: Session, receivedAt: UInt64) {
        guard context.node.isStarted else {
            context.node.whenStarted { [weak self] in self?.carryOut(request, frame: frame, session: session, receivedAt: receivedAt) }
            return
        }
        carryOut(request, frame: frame, session: session, receivedAt: receivedAt)
    }

    /// Routes `request` (`RequestRouter`) and hands it to the handler its route names.
    private func carryOut(_ request: IncomingRequest, frame: Data, session: Session, receivedAt: UInt64) {
        let now = context.now()
        let (route, caller) = session.state.withLock { state in
            let (user, device) = (state.claims?.sub, state.device)
            let route = router.route(
                request, state: &state, now: now, rooms: { [context] in user.map { context.presence.rooms(of: $0, device: device) } ?? [] },
                relayedTo: { room in session.relays.withLock { $0.rooms[room] } })
            return (route, state.caller)
        }
        switch (route, caller) {
        case (.hello(let args), _):
            sessionRequests.hello(args, re: request.id, session: session)
        case (.reject(let error), _):
            reject(session, re: request.id, error)
        case (.refuse(let error), let caller?) where request.isRoomOp:
            roomRequests.refuse(error, request: request, session: session, caller: caller, receivedAt: receivedAt)
        case (.refuse(let error), _):
            session.send(WireEncoder.failure(re: request.id, error))
        case (.session(let op), let caller?):
            sessionRequests.handle(op, re: request.id, session: session, caller: caller)
        case (.precall(let op), let caller?):
            precallRequests.handle(op, re: request.id, session: session, caller: caller)
        case (.room(let room), let caller?):
            roomRequests.handle(room, relayedTo: nil, request: request, frame: frame, session: session, caller: caller, receivedAt: receivedAt)
        case (.relay(let room, let node), let caller?):
            roomRequests.handle(room, relayedTo: node, request: request, frame: frame, session: session, caller: caller, receivedAt: receivedAt)
        case (.messaging(let command), let caller?):
            messagingRequests.handle(command, request: request, session: session, caller: caller, receivedAt: receivedAt)
        case (.session, nil), (.precall, nil), (.room, nil), (.relay, nil), (.messaging, nil):
            reject(session, re: request.id, ProtocolError(.unauthorized, "the first request must be hello"))
        }
    }
}

extension IncomingRequest {
    /// An op on a room (refusals of these are counted in the ops' metrics).
    fileprivate var isRoomOp: Bool {
        if case .room = command { return true }
        return false
    }
}
