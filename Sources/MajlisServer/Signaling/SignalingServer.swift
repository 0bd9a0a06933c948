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
/// Threads: the WebSocket service thread parses frames and answers session ops (`hello`, `ping`,
/// `session.renew`, `bye`); room ops go to the room's queue. Beside it run the services of
/// `services` (the cluster's registry and leases, the media router, webhooks, the `Sweeper`),
/// started after the listening socket and stopped after the sessions, in reverse order.
public final class SignalingServer: WebSocketDelegate, Sendable {
    /// The version reported in `hello` and `/healthz`.
    public static let version = "0.1.0"

    let context: ServerContext
    private let api: ServerAPI
    private let sessions = Mutex<[UInt64: Session]>([:])
    /// Open connections by peer address.
    private let perAddress = Mutex<[String: Int]>([:])
    /// The pre-call tests running, against their caps (docs/protocol.md section 15).
    private let precallBudget = Mutex(PrecallBudget())
    private let webSocket = Mutex<WebSocketServer?>(nil)
    /// Where sessions' links to `wss://` nodes of the cluster connect from (made when first needed).
    private let relayClient = Mutex<WebSocketClient?>(nil)
    /// What runs beside the signaling loop, started with it and stopped after it (set by `start`).
    private let services = Mutex<ServiceGroup?>(nil)
    private let started = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    /// Signalled when the last session closes (`stop` waits on it for the close frames to go).
    private let drained = NSCondition()
    /// Whether `stop` has finished, and who waits for it (`run`).
    private let stopped = Mutex<(done: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// Monotonic milliseconds: hello and heartbeat timeouts, when connections last heard their
    /// peer, and the media router's time (consent, overdue packets, reports).
    private let monotonic: @Sendable () -> Int64

    /// Opens the store; `start()` then listens. `clock` is wall time (Unix milliseconds) and
    /// `monotonic` monotonic milliseconds; tests give clocks that move only when they say.
    public init(
        config: ServerConfig, logger: Logger = Logger(label: "majlis"), clock: (@Sendable () -> Int64)? = nil, monotonic: (@Sendable () -> Int64)? = nil
    ) throws {
        self.monotonic = monotonic ?? MonotonicClock.wholeMilliseconds
        var config = config
        config.roomLimits.resumeGrace = Int64(config.resumeGrace) * 1000
        // The data directory holds the node's DTLS certificate (and the SQLite store, without PostgreSQL).
        try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
        let store = try config.postgresURL.map { try Store(postgres: $0) } ?? Store(directory: config.dataDirectory)
        let identity = try DTLSIdentity.load(directory: config.dataDirectory)
        var routerClock: (@Sendable () -> Double)?
        if let monotonic { routerClock = { Double(monotonic()) } }
        let media = try MediaRouter(
            host: config.mediaHost, port: config.mediaPort, advertise: config.mediaAdvertise, identity: identity, realtime: config.mediaRealtime,
            clock: routerClock)
        let redis = try config.redisURL.map { try RedisClient(url: $0) }
        let context = ServerContext(config: config, store: store, media: media, redis: redis, logger: logger, clock: clock ?? ServerContext.systemClock)
        self.context = context
        api = ServerAPI(context: context)
    }

    /// The services, in the order they start (see `ServiceGroup`).
    private func makeServices() -> ServiceGroup {
        let context = context
        let media = context.media
        let sweeper = Sweeper(context: context, sessions: { [weak self] in self?.sessions.withLock { Array($0.values) } ?? [] }, monotonic: monotonic)
        var services: [ServiceGroup.Service] = []
        if let registry = context.registry, let leases = context.leases {
            services.append(.init("registry", start: {
                try registry.join { context.node.report(context) }
                registry.start(drainAsked: { context.drain() })
            }, stop: { registry.stop() }))
            services.append(.init("leases", start: {
                leases.start(here: { context.node.placement(context) }) { room in context.rooms.relinquish(room) }
            }, stop: { leases.stop() }))
        }
        services.append(.init("media", start: { media.start() }, stop: { media.stop() }))
        if let webhooks = context.webhooks { services.append(.init("webhooks", start: { webhooks.start() }, stop: { webhooks.stop() })) }
        services.append(.init("sweeper", start: { sweeper.start() }, stop: { sweeper.stop() }))
        return ServiceGroup(services)
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

    /// Rooms the sweeper visits: those with a timer set or nobody in them.
    public var sweptRooms: Int { context.rooms.needingSweep.count }

    /// Open WebSocket connections.
    var connectionCount: Int { sessions.withLock { $0.count } }

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
        let routes = self.routes
        let limits = WebSocketServer.Limits(
            connectionsPerAddress: config.maxConnectionsPerAddress + Self.httpAllowance, requestSeconds: config.requestSeconds,
            refuseBody: { [weak self] request in self?.refuseBody(request, origins: origins, routes: routes) },
            acceptUpgrade: { origin, host in origins.acceptsUpgrade(origin: origin, host: host) }, exempt: nodeAddresses)
        do {
            server = try WebSocketServer(
                host: config.host, port: config.port, tls: tls, maxMessageBytes: config.maxFrameBytes, delegate: self, clock: monotonic,
                limits: limits, http: { [weak self] exchange in
                    guard let self else { return exchange.respond(HTTPResponse(status: 503, body: [])) }
                    self.http(exchange, origins: origins, routes: routes)
                })
        } catch {
            started.store(false, ordering: .sequentiallyConsistent)  // nothing started: it may be tried again
            throw error
        }
        webSocket.withLock { $0 = server }
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
        let open = sessions.withLock { Array($0.values) }
        for session in open { session.connection.close(code: CloseCode.goingAway.rawValue, reason: "server shutting down") }
        let deadline = Date().addingTimeInterval(1)
        drained.lock()
        while sessions.withLock({ !$0.isEmpty }), drained.wait(until: deadline) {}
        drained.unlock()
        webSocket.withLock { server in
            server?.stop()
            server = nil
        }
        relayClient.withLock { client in
            client?.stop()
            client = nil
        }
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

    /// The HTTP side: the server API, metrics, health and the web app, in that order.
    private var routes: HTTPRouteTable {
        HTTPRouteTable(routes: [
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
        ])
    }

    private func http(_ exchange: HTTPExchange, origins: OriginPolicy, routes: HTTPRouteTable) {
        let request = exchange.request
        guard origins.answers(host: request.headers["host"]) else { return exchange.respond(Self.foreignHost) }
        guard let route = routes.route(for: request) else { return exchange.respond(Self.getOnly) }
        route.respond(exchange)
    }

    /// In a cluster, WebSockets an address may open beyond its limit until their `hello`: the
    /// relay links another node opens at once (a burst of its users joining rooms here), each
    /// counted from its `hello` on against the client's address it states. The limit holds at
    /// `hello` for everyone.
    public static let relayAllowance = 32

    /// Connections of any kind an address may hold beyond its WebSockets: room for API calls
    /// and pages beside a full set of WebSockets (which are then refused with a clear 4008).
    public static let httpAllowance = 32

    private static let foreignHost = HTTPResponse(
        status: 403,
        body: Array(#"{"error":{"code":"forbidden","message":"a development server answers only on localhost or an IP address (Host)"}}"#.utf8))
    private static let getOnly = HTTPResponse(
        status: 405, body: Array(#"{"error":{"code":"unsupported","message":"only GET and HEAD are served here"}}"#.utf8), headers: ["Allow": "GET, HEAD"])

    /// Whether the body of `request` may be read (nil) or is refused unread with an answer: only
    /// the API takes bodies, and only with a token that may make the call.
    private func refuseBody(_ request: HTTPRequest, origins: OriginPolicy, routes: HTTPRouteTable) -> HTTPResponse? {
        guard origins.answers(host: request.headers["host"]) else { return Self.foreignHost }
        guard routes.route(for: request)?.takesBody == true else { return Self.getOnly }
        return api.refusal(request)
    }

    /// `GET /healthz`: the node's state, connections, media and signaling delays.
    private func health() -> HTTPResponse {
        struct Media: Encodable {
            var forwarded: Int
            var dropped: Int
            var retransmitted: Int
            /// Receive to send of forwarded packets since the start, microseconds.
            var forwardLatencyP50: Int
            var forwardLatencyP99: Int
            var forwardLatencyMax: Int
            /// Whether the forwarding thread runs at real-time priority now.
            var realtime: Bool
        }
        struct Delays: Encodable {
            /// Microseconds, since the start.
            var p50: Int
            var p99: Int
            var histogram: DelayHistogram

            init(_ histogram: DelayHistogram) {
                p50 = histogram.percentile(0.5)
                p99 = histogram.percentile(0.99)
                self.histogram = histogram
            }
        }
        struct Signaling: Encodable {
            /// From a request's arrival to the write of its answer, and of each event it caused.
            var answers: Delays
            var events: Delays
            /// From a room op's arrival to the start of its work on the room's queue.
            var queued: Delays
        }
        struct Health: Encodable {
            /// "ok", or "degraded" while the store fails (rooms in memory go on; what needs the store is refused).
            var status: String
            var version = SignalingServer.version
            var node: String
            /// "ok", or what the store's last use or check (every five seconds) failed with.
            var store: String
            var rooms: Int
            var connections: Int
            var media: Media
            var signaling: Signaling
            /// A node of a cluster: whether its last report reached the registry, and the
            /// rooms it holds.
            var cluster: Cluster?
        }
        struct Cluster: Encodable {
            var registry: String
            var roomsHeld: Int
        }
        let counted = context.media.counted
        let latency = context.media.forwardingLatency
        let media = Media(
            forwarded: counted.forwarded, dropped: counted.droppedBadPacket + counted.droppedUnbound + counted.droppedNotAllowed,
            retransmitted: counted.retransmitted, forwardLatencyP50: latency.p50, forwardLatencyP99: latency.p99, forwardLatencyMax: latency.max,
            realtime: context.media.isRealtime)
        let delays = webSocket.withLock { $0?.writeDelays } ?? (answers: DelayHistogram(), events: DelayHistogram())
        let storeFailure = context.store.failing
        let health = Health(
            status: storeFailure == nil ? "ok" : "degraded", node: context.config.node, store: storeFailure ?? "ok", rooms: context.rooms.count, connections: sessions.withLock { $0.count }, media: media,
            signaling: Signaling(
                answers: Delays(delays.answers), events: Delays(delays.events), queued: Delays(context.metrics.roomQueueWaits)),
            cluster: context.registry.map { Cluster(registry: $0.reachable ? "ok" : "unreachable", roomsHeld: context.leases?.held ?? 0) })
        return HTTPResponse(status: 200, body: Array(WireEncoder.encode(health)))
    }

    // MARK: WebSocketDelegate (service thread)

    /// What bounds each session, from the configuration.
    private var sessionLimits: SessionState.Limits {
        let config = context.config
        var limits = SessionState.Limits(
            requestsPerSecond: config.requestsPerSecond, requestBurst: config.requestBurst, chatPerSecond: config.roomLimits.chatPerSecond,
            chatBurst: config.roomLimits.chatBurst, offersPerSecond: config.offersPerSecond, offerBurst: config.offerBurst,
            helloTimeout: config.helloTimeout, heartbeat: config.heartbeat)
        limits.answerBytesPerSecond = config.answerBytesPerSecond
        limits.answerBurstBytes = config.answerBurstBytes
        return limits
    }

    public func webSocketDidOpen(_ connection: WebSocketConnection) {
        let session = Session(connection: connection, now: context.now(), limits: sessionLimits, frames: Self.decodeQueue)
        sessions.withLock { $0[connection.id] = session }
        let fromAddress = perAddress.withLock { counts in
            counts[connection.peer, default: 0] += 1
            return counts[connection.peer] ?? 0
        }
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
        guard !connection.isClosed, let session = sessions.withLock({ $0[connection.id] }) else { return }
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
                reject(session, re: re, error.code == .badRequest ? error : ProtocolError(.unauthorized, "the first request must be hello"))
                return
            }
            session.send(WireEncoder.failure(re: re, error))
        case .request(let request):
            handle(request, frame: message, session: session, receivedAt: receivedAt)
        }
    }

    public func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        guard let (session, empty) = sessions.withLock({ open in open.removeValue(forKey: connection.id).map { ($0, open.isEmpty) } }) else { return }
        if empty {
            drained.lock()
            drained.broadcast()
            drained.unlock()
        }
        session.address.withLock { address in
            perAddress.withLock { counts in
                counts[address, default: 1] -= 1
                if counts[address] ?? 0 <= 0 { counts[address] = nil }
            }
        }
        release(session)
    }

    /// A closed connection's user is no longer present through it: its rooms hold it for the
    /// resume grace (unless it said `bye`). Harmless when done twice.
    private func release(_ session: Session) {
        let links = session.relays.withLock { table in
            table.closed = true
            defer { table.links = [:] }
            return Array(table.links.values)
        }
        for link in links { link.close() }
        guard let user = session.userId else { return }
        for kind in [PrecallBudget.Kind.echo, .probe] {
            precallBudget.withLock { $0.end(precallTest(session, kind)) }
            context.media.stopPrecall(test: precallTest(session, kind), user: user)
        }
        let leaving = session.state.withLock { $0.leaving }
        guard let rooms = context.presence.unbind(user, session: session), !leaving else { return }
        for room in rooms {
            context.rooms.withHost(room, context: context) { try? $0.get().disconnect(user) }
        }
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

    private func carryOut(_ request: IncomingRequest, frame: Data, session: Session, receivedAt: UInt64) {
        if case .hello(let args) = request.command {
            hello(args, re: request.id, session: session)
            return
        }
        guard let caller = session.caller, let claims = session.claims else {
            reject(session, re: request.id, ProtocolError(.unauthorized, "the first request must be hello"))
            return
        }
        switch request.command {
        case .hello:
            break
        case .ping:
            struct Pong: Encodable {
                var t: Int64
                var nodes: [ClusterNode]?
            }
            session.send(WireEncoder.success(re: request.id, data: Pong(t: context.now(), nodes: clusterNodes())))
        case .renew(let token):
            renew(token, re: request.id, session: session)
        case .bye:
            session.state.withLock { $0.leave() }
            for link in session.relays.withLock({ Array($0.links.values) }) { link.send(own: RelayLink.byeId, op: "bye", args: EmptyData()) }
            for room in context.presence.rooms(of: caller.id) {
                context.rooms.withHost(room, context: context) { try? $0.get().drop(caller.id, reason: "left") }
            }
            session.send(WireEncoder.success(re: request.id, data: EmptyData()))
            session.connection.close(code: 1000, reason: "bye")
        case .room(let roomId, let command):
            room(roomId, command, request: request, frame: frame, session: session, caller: caller, claims: claims, receivedAt: receivedAt)
        case .echoStart, .echoStop, .probeStart, .probeResult, .probeStop:
            precall(request, session: session, caller: caller)
        }
    }

    /// The answer to an offer over the connection's offer rate (`webrtc.offer`, `echo.start` with `sdp`).
    private var tooManyOffers: ProtocolError {
        ProtocolError(.rateLimited, "too many WebRTC offers: at most \(context.config.offersPerSecond.formatted()) a second after \(context.config.offerBurst)")
    }

    /// The name a connection's pre-call test of `kind` runs under in the media router.
    private func precallTest(_ session: Session, _ kind: PrecallBudget.Kind) -> String { "\(ObjectIdentifier(session).hashValue)/\(kind.rawValue)" }

    /// The pre-call tests (docs/protocol.md section 15): each connection may run an echo test and
    /// a probe, before or beside its rooms; they end with the connection, or after a minute.
    private func precall(_ request: IncomingRequest, session: Session, caller: Caller) {
        let media = context.media
        struct Started: Encodable {
            var media: JSONValue?
            var echoSSRC: UInt32?
            var delay: Int?
            var up: Int?
            var down: Int?
            var seconds: Int
            var sdp: String?
            var tracks: [WebRTCAnswer.Track]?
            var uplink: String?
        }
        func fail(_ error: ProtocolError) { session.send(WireEncoder.failure(re: request.id, error)) }
        /// Admits `kind`'s test under the caps, or answers why not (false).
        func admit(_ kind: PrecallBudget.Kind, bitrate: Int = 0) -> Bool {
            let address = session.address.withLock { $0 }
            let now = context.now()
            guard let refusal = precallBudget.withLock({ $0.admit(precallTest(session, kind), kind: kind, user: caller.id, address: address, bitrate: bitrate, now: now) })
            else { return true }
            fail(refusal)
            return false
        }
        func stop(_ kind: PrecallBudget.Kind) {
            precallBudget.withLock { $0.end(precallTest(session, kind)) }
            media.stopPrecall(test: precallTest(session, kind), user: caller.id)
        }
        switch request.command {
        case .echoStart(let delay, let sdp):
            let test = precallTest(session, .echo)
            let room = MediaRouterCore.precallRoom(test)
            var offer: WebRTCOffer?
            if let sdp {
                // Offers cost CPU to read, wherever they come: under the same limit as `webrtc.offer`'s.
                guard session.state.withLock({ $0.admitOffer(now: context.now()) }) else {
                    fail(tooManyOffers)
                    return
                }
                // The microphone and its echo are all an echo test can use.
                let sections = sdp.utf8.split(separator: UInt8(ascii: "\n")).count { $0.starts(with: "m=".utf8) }
                guard sections <= 2 else {
                    fail(ProtocolError(.badRequest, "echo.start: \(sections) media sections; an echo test takes at most 2 (the microphone and its echo)"))
                    return
                }
                do {
                    offer = try WebRTCOffer(sdp: sdp)
                } catch {
                    fail(ProtocolError(.badRequest, "echo.start: \(error)"))
                    return
                }
            }
            guard admit(.echo) else { return }
            let ssrc = media.startPrecall(.echo(delay: Double(delay)), test: test, user: caller.id)
            var started = Started(
                media: media.mediaInfo(room: room, user: caller.id), echoSSRC: ssrc ^ 0x8000_0000, delay: delay,
                seconds: Int(MediaRouterCore.precallLifetime / 1_000))
            if let offer {
                guard let answer = media.negotiate(room: room, user: caller.id, offer: offer, seats: 1) else {
                    stop(.echo)
                    fail(ProtocolError(.internal, "WebRTC media is not available on this server"))
                    return
                }
                started.media = nil
                started.echoSSRC = answer.tracks.first?.ssrc
                started.sdp = answer.sdp
                started.tracks = answer.tracks
                started.uplink = answer.uplink
            }
            session.send(WireEncoder.success(re: request.id, data: started))
        case .probeStart(let up, let down):
            let test = precallTest(session, .probe)
            guard admit(.probe, bitrate: ProbeSchedule.clamped(down)) else { return }
            media.startPrecall(.probe(up: up, down: down), test: test, user: caller.id)
            let info = media.mediaInfo(room: MediaRouterCore.precallRoom(test), user: caller.id)
            session.send(WireEncoder.success(re: request.id, data: Started(
                media: info, up: ProbeSchedule(bitrate: up).bitrate, down: ProbeSchedule(bitrate: down).bitrate,
                seconds: Int(MediaRouterCore.precallLifetime / 1_000))))
        case .probeResult:
            guard let figures = media.probeFigures(test: precallTest(session, .probe), user: caller.id) else {
                session.send(WireEncoder.failure(re: request.id, ProtocolError(.badRequest, "no probe runs on this connection: probe.start first")))
                return
            }
            struct Result: Encodable { var up: ProbeFigures }
            session.send(WireEncoder.success(re: request.id, data: Result(up: figures)))
        case .echoStop:
            stop(.echo)
            session.send(WireEncoder.success(re: request.id, data: EmptyData()))
        case .probeStop:
            stop(.probe)
            session.send(WireEncoder.success(re: request.id, data: EmptyData()))
        default:
            break
        }
    }

    private func room(
        _ roomId: String, _ command: RoomCommand, request: IncomingRequest, frame: Data, session: Session, caller: Caller, claims: AccessClaims,
        receivedAt: UInt64
    ) {
        let received = receivedAt
        let fail: @Sendable (ProtocolError) -> Void = { error in
            if case .join = command {
                self.context.logger.log(
                    .info, "room \(roomId): \(caller.id) may not join (\(error.code.rawValue))", event: "join.rejected",
                    fields: ["room": roomId, "user": caller.id, "code": error.code.rawValue])
            }
            self.context.metrics.recordOp(request.op, result: error.code.rawValue, since: received)
            session.send(WireEncoder.failure(re: request.id, error))
        }
        guard claims.allows(room: roomId) else {
            fail(ProtocolError(.forbidden, "your token is for room \(claims.room ?? "")"))
            return
        }
        if case .sendChat = command, !session.state.withLock({ $0.admitChat(now: context.now()) }) {
            let limits = context.config.roomLimits
            fail(ProtocolError(.rateLimited, "too many messages: at most \(limits.chatPerSecond) per second across all rooms"))
            return
        }
        let config = context.config
        if case .offerWebRTC = command, !session.state.withLock({ $0.admitOffer(now: context.now()) }) {
            fail(tooManyOffers)
            return
        }
        switch command {
        case .join, .sync, .listMembers, .chatHistory:
            guard session.state.withLock({ $0.admitRead(now: context.now()) }) else {
                let limits = session.state.withLock { $0.limits }
                return fail(ProtocolError(
                    .rateLimited, "too much read: answers to joins, syncs, member lists and history of at most \(limits.answerBytesPerSecond) bytes a second"))
            }
        default:
            break
        }
        switch command {
        case .create, .join:
            let current = context.presence.rooms(of: caller.id)
            if !current.contains(roomId), current.count >= config.maxRoomsPerConnection {
                fail(ProtocolError(.forbidden, "you are in \(current.count) rooms, the most one user may be in at once; leave one first"))
                return
            }
        default:
            break
        }
        // A room this session reaches through another node: straight there.
        if let link = session.relays.withLock({ $0.link(for: roomId) }) {
            link.forward(frame, id: request.id, room: roomId)
            return
        }
        let ownedLimit = caller.grants.admin ? nil : context.config.maxRoomsPerUser
        var creation: RoomRegistry.Creation?
        var effective = command
        // A member's join may open the room on another, less loaded node.
        var placing = true
        switch command {
        case .create(let settings):
            guard caller.grants.create else { return fail(ProtocolError(.forbidden, "your token does not grant create")) }
            creation = .init(settings: settings, owner: caller.id, ownedLimit: ownedLimit, mustBeNew: true, allowed: true)
            effective = .join(create: nil)
        case .join(let create):
            guard caller.grants.join else { return fail(ProtocolError(.forbidden, "your token does not grant join")) }
            creation = create.map { .init(settings: $0, owner: caller.id, ownedLimit: ownedLimit, mustBeNew: false, allowed: caller.grants.create) }
        default:
            placing = false
        }
        // A room in memory is handed over at once; one to load or create waits for the loader
        // (the store is never touched on this thread).
        let op = request.op
        let re = request.id
        let rid = request.rid
        let command = effective
        context.rooms.withHost(roomId, creation: creation, placing: placing, context: context) { result in
            switch result {
            case .success(let host):
                host.perform(re: re, op: op, rid: rid, command: command, session: session, caller: caller, receivedAt: received)
            case .failure(let error):
                if !self.relay(frame, id: re, room: roomId, refused: error, session: session) { fail(error) }
            }
        }
    }

    /// Carries a request on a room another node hosts (`refused` is this node's `conflict`
    /// naming it) to that node, over the session's link to it; false when it cannot be relayed
    /// (no node named with its signaling, or the session is itself relayed from another node).
    private func relay(_ frame: Data, id: Int64, room: String, refused: ProtocolError, session: Session) -> Bool {
        guard refused.code == .conflict, let host = refused.host, let url = host.signaling, host.node != context.config.node,
            !session.connection.isClosed
        else { return false }
        let unreachable = ProtocolError(
            .conflict, "room \(room) is hosted on node \(host.node) (\(url)), which cannot be reached from here: connect there, or try again once it has moved",
            host: host)
        let here = context.config.node
        let statement = RelayStatement(node: here, client: session.address.withLock { $0 }, at: context.now()).sealed(with: context.seal)
        let made: (link: RelayLink, new: Bool)? = session.relays.withLock { table in
            guard !table.closed, table.via == nil, let token = table.token else { return nil }
            table.rooms[room] = host.node
            if let link = table.links[host.node] { return (link, false) }
            let link = RelayLink(node: host.node, session: session, token: token, from: here, statement: statement, unreachable: unreachable) {
                [weak self] link, opened, code, reason in
                self?.relayClosed(link, session: session, opened: opened, code: code, reason: reason)
            }
            table.links[host.node] = link
            return (link, true)
        }
        guard let made else { return false }
        made.link.forward(frame, id: id, room: room)
        if made.new { made.link.open(url) { [self] url, link in try relayConnect(url, link) } }
        return true
    }

    /// Opens a link's connection: a `ws://` node's on this server's own service thread (no
    /// thread between the client's connection and the link), a `wss://` node's through a relay
    /// client made on first use.
    private func relayConnect(_ url: String, _ link: any WebSocketDelegate) throws -> WebSocketConnection {
        if url.hasPrefix("ws://"), let server = webSocket.withLock({ $0 }) { return try server.connect(url: url, delegate: link) }
        let client = try relayClient.withLock { client throws -> WebSocketClient in
            guard !stopping.load(ordering: .relaxed) else { throw ProtocolError(.internal, "the server is stopping") }
            if let client { return client }
            let made = try WebSocketClient(maxMessageBytes: 16 << 20)
            client = made
            return made
        }
        return try client.connect(url: url, delegate: link)
    }

    /// A session's link to another node closed. One the node closed while it carried rooms
    /// ends the client's connection as the node ended it: the node went away or let the room
    /// go (1001 here: connect again, and join again), the user's newer connection replaced it
    /// (4004), the token expired (4001), or the user was kicked from the last room it was in
    /// (4003, when the session is in no other room). After `bye` (1000) nothing more happens;
    /// nor when the link never opened (its requests were answered `conflict`).
    private func relayClosed(_ link: RelayLink, session: Session, opened: Bool, code: UInt16?, reason: String) {
        let (mine, others) = session.relays.withLock { table in (table.remove(link) && !table.closed, !table.links.isEmpty) }
        guard mine, opened else { return }
        switch code {
        case 1000?:
            return
        case CloseCode.kicked.rawValue?:
            guard !others, let user = session.userId, context.presence.rooms(of: user).isEmpty else { return }
            session.connection.close(code: CloseCode.kicked.rawValue, reason: reason)
        case CloseCode.unauthorized.rawValue?, CloseCode.replaced.rawValue?:
            session.connection.close(code: code!, reason: reason)
        default:
            session.connection.close(code: CloseCode.goingAway.rawValue, reason: "node \(link.node), which hosts a room of yours, went away: connect again")
        }
    }

    /// Whether the session's address holds no more connections than it may, at `hello`. A
    /// session another node of the cluster relays is first counted against the client's address
    /// that node states (signed: `RelayStatement`) instead of the node's; a statement not
    /// believed changes nothing.
    private func admitAddress(_ session: Session, _ args: HelloArgs) -> Bool {
        var client: String?
        if let via = args.via, let relay = args.relay {
            client = RelayStatement.client(in: relay, seal: context.seal, via: via, now: context.now())
        }
        let most = context.config.maxConnectionsPerAddress
        return session.address.withLock { address in
            // Closed meanwhile: its count is (or is about to be) given back where it was.
            guard sessions.withLock({ $0[session.connection.id] }) === session else { return true }
            return perAddress.withLock { counts in
                if let client, client != address {
                    counts[address, default: 1] -= 1
                    if counts[address] ?? 0 <= 0 { counts[address] = nil }
                    address = client
                    counts[client, default: 0] += 1
                }
                return counts[address, default: 0] <= most
            }
        }
    }

    private func hello(_ args: HelloArgs, re: Int64, session: Session) {
        if session.claims != nil {
            session.send(WireEncoder.failure(re: re, ProtocolError(.badRequest, "hello was already sent on this connection")))
            return
        }
        let claims: AccessClaims
        do {
            claims = try AccessToken.verify(args.token, keys: context.config.keys, now: context.now() / 1000)
        } catch {
            context.metrics.count(.loginsRejected)
            context.logger.log(
                .warning, "login rejected from \(session.connection.peer): \(error)", event: "login.rejected",
                fields: ["peer": session.connection.peer, "reason": "\(error)"])
            reject(session, re: re, error)
            return
        }
        if !admitAddress(session, args) {
            let most = context.config.maxConnectionsPerAddress
            session.send(WireEncoder.failure(re: re, ProtocolError(.rateLimited, "too many connections from your address (at most \(most))")))
            session.connection.close(code: CloseCode.policy.rawValue, reason: "too many connections from your address (at most \(most))")
            return
        }
        let previousId = args.resume
        let (replaced, rooms) = context.presence.bind(claims.sub, to: session)
        let resumed = previousId != nil && (replaced?.sessionId == previousId || !rooms.isEmpty)
        let sessionId = resumed ? previousId! : "s" + HMACSHA256.randomBytes(12).map { String(format: "%02x", $0) }.joined()
        do throws(ProtocolError) {
            try session.state.withLock { state throws(ProtocolError) in try state.greet(claims, id: sessionId) }
        } catch {
            session.send(WireEncoder.failure(re: re, error))
            return
        }
        session.relays.withLock { table in
            table.token = args.token
            table.via = args.via
        }
        if let replaced {
            replaced.state.withLock { $0.leave() }
            replaced.connection.close(code: CloseCode.replaced.rawValue, reason: "replaced by a newer connection")
        }
        // A hello read off the service thread may finish after its connection closed: then the
        // user is not left present through a dead connection.
        if sessions.withLock({ $0[session.connection.id] }) !== session {
            release(session)
            return
        }
        for room in rooms { context.rooms.withHost(room, context: context) { try? $0.get().reconnect(claims.sub) } }
        struct HelloData: Encodable {
            struct User: Encodable { var id: String; var name: String }
            struct Server: Encodable { var version: String; var node: String }
            var session: String
            var user: User
            var server: Server
            var heartbeat: Int
            var expiresAt: Int64
            var resumed: Bool
            var rooms: [String]
            var nodes: [ClusterNode]?
        }
        let nodes = clusterNodes()
        let data = HelloData(
            session: sessionId, user: .init(id: claims.sub, name: DisplayName.clean(claims.name ?? claims.sub)),
            server: .init(version: Self.version, node: context.config.node), heartbeat: context.config.heartbeat,
            expiresAt: claims.exp, resumed: !rooms.isEmpty, rooms: rooms.sorted(), nodes: nodes)
        session.send(WireEncoder.success(re: re, data: data))
    }

    /// Whether an IP address is one of the cluster's other live nodes' (the host of its signaling
    /// or media address in its signed registry entry): the relay links it opens for its users
    /// are not held to one address's limit at the TCP level or before `hello` (each relayed
    /// session counts against its client's address from `hello` on).
    private var nodeAddresses: @Sendable (String) -> Bool {
        let context = context
        return { address in
            context.registry?.lastKnown.contains { node in
                guard node.id != context.config.node else { return false }
                let signaling = URLComponents(string: node.signaling)?.host?.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                let media = node.media.lastIndex(of: ":").map { String(node.media[..<$0]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")) }
                return signaling == address || media == address
            } ?? false
        }
    }

    /// The signaling addresses of the cluster's other live nodes (as the last report found
    /// them), whose pages may connect here and which this node's pages may connect to.
    private var peerAddresses: @Sendable () -> [String] {
        let context = context
        return { context.registry?.lastKnown.filter { $0.id != context.config.node }.map(\.signaling) ?? [] }
    }

    /// A live node of the cluster, as `hello` and `ping` answers list them.
    struct ClusterNode: Encodable {
        var id: String
        var signaling: String
    }

    /// In a cluster, the live nodes a client may connect to when this one goes away (as the last
    /// report found them); nil for a lone server.
    private func clusterNodes() -> [ClusterNode]? {
        context.registry.map { $0.lastKnown.filter { $0.state == .active }.map { ClusterNode(id: $0.id, signaling: $0.signaling) } }
    }

    private func renew(_ token: String, re: Int64, session: Session) {
        do throws(ProtocolError) {
            let claims = try AccessToken.verify(token, keys: context.config.keys, now: context.now() / 1000)
            try session.state.withLock { state throws(ProtocolError) in try state.renew(claims) }
            let links = session.relays.withLock { table in
                table.token = token
                return Array(table.links.values)
            }
            for link in links { link.send(own: RelayLink.renewId, op: "session.renew", args: ["token": token]) }
            session.send(WireEncoder.success(re: re, data: ["expiresAt": claims.exp]))
        } catch {
            session.send(WireEncoder.failure(re: re, error))
        }
    }
}
