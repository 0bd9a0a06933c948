import Foundation
import MajlisForwarding
import MajlisProtocol
import MajlisTransport
import Synchronization

/// The selective forwarding unit's host: one UDP socket and one thread that owns the router's
/// state machine (`MediaRouterCore`, which holds the forwarding rules). Rooms post commands to
/// an inbox that the thread applies before the next packet; the thread itself asks speakers for
/// overdue packets every 10 ms, sends the reports once a second and leaves levels, quality and
/// counters in an outbox for the sweeper and health checks. The forwarding path takes no lock
/// that anything else holds for long.
///
/// Thread rules: the core, its output and the receive buffer are the router thread's own (made
/// by `run`, so nothing else can reach them); room executors call `join`, `leave`,
/// `setSpeakers`, `ssrcs` and `mediaInfo`; the sweeper calls `takeLevels` and `takeQuality`;
/// anyone may read `counted` and `forwardingLatency`. Everything shared is a Mutex or an Atomic.
final class MediaRouter: Sendable {

    /// What is published from the router thread.
    private struct Outbox {
        var levels: [String: [String: SpeakerLevel]] = [:]
        var quality: [String: [MemberQuality]] = [:]
        var counters = MediaCounters()
        var latency: (p50: Int, p99: Int, max: Int, count: Int) = (0, 0, 0, 0)
        var forwarding = LatencyHistogram()
        var legs = LegHistograms()
        /// What arrived of each running probe's uplink, by SSRC.
        var probes: [UInt32: ProbeFigures] = [:]
    }

    /// Loss and jitter of every member's legs, one observation per reporting interval.
    struct LegHistograms: Sendable {
        static let lossEdges = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5]
        static let jitterEdges = [0.005, 0.01, 0.02, 0.03, 0.06, 0.1, 0.2, 0.4]
        var upLoss = MetricHistogram(edges: lossEdges)
        var downLoss = MetricHistogram(edges: lossEdges)
        /// Seconds.
        var upJitter = MetricHistogram(edges: jitterEdges)
        var downJitter = MetricHistogram(edges: jitterEdges)
    }

    /// A member's SSRC and key, as its snapshots give them.
    private struct Credentials {
        var ssrc: UInt32
        var key: [UInt8]
    }

    let socket: UDPSocket
    /// What clients are told to send to.
    let advertised: String
    private let inbox = Mutex<[RouterCommand]>([])
    private let inboxFilled = Atomic<Bool>(false)
    private let outbox = Mutex(Outbox())
    /// Room → user → credentials; touched by room executors only.
    private let directory = Mutex<[String: [String: Credentials]]>([:])
    /// A browser's transport as last negotiated (by room and user): renegotiations keep it.
    private struct KnownPeer {
        var local: ICECredentials
        var peerUfrag: String
        var fingerprint: [UInt8]
        var version: Int
    }
    private let peers = Mutex<[String: KnownPeer]>([:])
    /// The DTLS certificate browsers see (nil: WebRTC is off).
    let identity: DTLSIdentity?
    private let ssrcs = Mutex(SSRCAllocator())
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let realtimeNow = Atomic<Bool>(false)
    private let realtime: Bool

    /// The router's time in milliseconds (nil: the monotonic clock, read as each datagram
    /// arrives): when consent lapses, when packets are overdue, when reports are due. Forwarding
    /// latency is always measured on the monotonic clock.
    private let clock: (any MillisecondClock)?

    /// `realtime`: whether the thread asks for real-time scheduling (see `run`). `clock`: the
    /// router's time (tests give one that moves only when they say).
    init(host: String, port: Int, advertise: String?, identity: DTLSIdentity?, realtime: Bool = false, clock: (any MillisecondClock)? = nil) throws(MediaError) {
        self.identity = identity
        self.realtime = realtime
        self.clock = clock
        socket = try UDPSocket(host: host, port: port, receiveTimeoutMilliseconds: 10)
        advertised = advertise ?? "\(host):\(socket.port)"
    }

    func start() {
        running.store(true, ordering: .sequentiallyConsistent)
        let thread = Thread { [self] in
            ThreadName.set("majlis-media")
            run()
            finished.signal()
        }
        thread.start()
    }

    func stop() {
        guard running.exchange(false, ordering: .sequentiallyConsistent) else { return }
        finished.wait()
        socket.close()
    }

    var counted: MediaCounters { outbox.withLock { $0.counters } }

    /// Receive-to-send time of every forwarded copy since the start, in microseconds (as of the
    /// last publication: at a quiet moment or tick, at most four times a second).
    var forwardingLatency: (p50: Int, p99: Int, max: Int, count: Int) { outbox.withLock { $0.latency } }

    /// Whether the forwarding thread is real-time now (see `run`).
    var isRealtime: Bool { realtimeNow.load(ordering: .relaxed) }

    /// Every forwarding latency since the start (as of the last publication, as above).
    var forwardingHistogram: LatencyHistogram { outbox.withLock { $0.forwarding } }

    /// Loss and jitter of members' legs since the start.
    var legs: LegHistograms { outbox.withLock { $0.legs } }

    // MARK: Room side

    /// Gives `user` a fresh SSRC and key in `room` (a rejoin rotates them).
    @discardableResult
    func join(room: String, user: String) -> (ssrc: UInt32, key: [UInt8]) {
        let (ssrc, key) = enter(room: room, user: user)
        post(.join(room: room, user: user, ssrc: ssrc, key: key))
        return (ssrc, key)
    }

    func leave(room: String, user: String) {
        peers.withLock { $0["\(room)\u{0}\(user)"] = nil }
        let known = directory.withLock { directory -> Credentials? in
            guard let credentials = directory[room]?.removeValue(forKey: user) else { return nil }
            if directory[room]?.isEmpty == true { directory[room] = nil }
            return credentials
        }
        if let known {
            ssrcs.withLock { $0.release(known.ssrc) }
            post(.leave(room: room, user: user))
        }
    }

    /// Fresh credentials for `user` in `room` (the SSRC of any before it is free again).
    private func enter(room: String, user: String) -> (ssrc: UInt32, key: [UInt8]) {
        let ssrc = ssrcs.withLock { $0.allocate() }
        let key = HMACSHA256.randomBytes(SRTPSession.keyLength)
        let old = directory.withLock { directory in
            defer { directory[room, default: [:]][user] = Credentials(ssrc: ssrc, key: key) }
            return directory[room]?[user]
        }
        if let old { ssrcs.withLock { $0.release(old.ssrc) } }
        return (ssrc, key)
    }

    /// What a pre-call test does (docs/protocol.md section 15).
    enum Precall {
        case echo(delay: Double)
        case probe(up: Int, down: Int)
    }

    /// Starts a pre-call test for `user` under `test` (its connection's own name), with fresh
    /// credentials (a test started again replaces the one before); its `media` object is
    /// `mediaInfo(room: MediaRouterCore.precallRoom(test), user:)`.
    @discardableResult
    func startPrecall(_ kind: Precall, test: String, user: String) -> UInt32 {
        let room = MediaRouterCore.precallRoom(test)
        let (ssrc, key) = enter(room: room, user: user)
        switch kind {
        case .echo(let delay): post(.echoTest(test: test, user: user, ssrc: ssrc, key: key, delay: delay))
        case .probe(let up, let down): post(.probe(test: test, user: user, ssrc: ssrc, key: key, up: up, down: down))
        }
        return ssrc
    }

    /// Ends `user`'s pre-call test under `test`, if one runs.
    func stopPrecall(test: String, user: String) {
        leave(room: MediaRouterCore.precallRoom(test), user: user)
    }

    /// What arrived so far of the uplink of `user`'s probe under `test` (nil: none runs).
    func probeFigures(test: String, user: String) -> ProbeFigures? {
        guard let ssrc = directory.withLock({ $0[MediaRouterCore.precallRoom(test)]?[user]?.ssrc }) else { return nil }
        return outbox.withLock { $0.probes[ssrc] } ?? ProbeFigures(bandwidth: 0, loss: 0, jitter: 0, received: 0)
    }

    /// Who may be heard in `room` now, and from which seat.
    func setSpeakers(room: String, seats: [String: Int]) {
        post(.setSpeakers(room: room, seats: seats))
    }

    /// Answers a browser's SDP offer for `user` (joined to `room`) in a room of `seats` seats, and
    /// sets up its transport; a new offer on the same transport (same ICE ufrag and
    /// fingerprint) renegotiates it.
    func negotiate(room: String, user: String, offer: WebRTCOffer, seats: Int) -> WebRTCAnswer? {
        guard let identity, directory.withLock({ $0[room]?[user] }) != nil else { return nil }
        let (local, version) = peers.withLock { peers -> (ICECredentials, Int) in
            let key = "\(room)\u{0}\(user)"
            if let known = peers[key], known.peerUfrag == offer.iceUfrag, known.fingerprint == offer.fingerprint {
                peers[key]?.version += 1
                return (known.local, known.version + 1)
            }
            let local = ICECredentials.random()
            peers[key] = KnownPeer(local: local, peerUfrag: offer.iceUfrag, fingerprint: offer.fingerprint, version: 1)
            return (local, 1)
        }
        let parts = advertised.split(separator: ":")
        let host = parts.count > 1 ? parts.dropLast().joined(separator: ":") : advertised
        let port = parts.count > 1 ? Int(parts[parts.count - 1]) ?? socket.port : socket.port
        let answer = WebRTCAnswer(offer: offer, seats: seats, ice: local, fingerprint: identity.fingerprintText, host: host, port: port, version: version)
        post(.webrtc(room: room, user: user, peer: WebRTCPeer(local: local, peerUfrag: offer.iceUfrag, peerPassword: offer.icePassword, peerFingerprint: offer.fingerprint, parameters: answer.parameters)))
        return answer
    }

    private func post(_ command: RouterCommand) {
        inbox.withLock { $0.append(command) }
        inboxFilled.store(true, ordering: .releasing)
    }

    /// The SSRCs of these members (those that have one).
    func ssrcs(room: String, users: [String]) -> [String: UInt32] {
        directory.withLock { directory in
            guard let map = directory[room] else { return [:] }
            var result: [String: UInt32] = [:]
            for user in users { result[user] = map[user]?.ssrc }
            return result
        }
    }

    /// The `media` object of a snapshot for `user`.
    func mediaInfo(room: String, user: String) -> JSONValue? {
        guard let credentials = directory.withLock({ $0[room]?[user] }) else { return nil }
        return [
            "udp": .string(advertised), "ssrc": .int(Int64(credentials.ssrc)), "key": .string(Data(credentials.key).base64EncodedString()),
            "suite": "AES_CM_128_HMAC_SHA1_80", "payloadType": .int(Int64(MediaRouterCore.payloadType)),
            "audioLevelExtension": .int(Int64(MediaRouterCore.audioLevelExtension)), "redPayloadType": .int(Int64(MediaRouterCore.redPayloadType)),
            "serverSSRC": .int(Int64(MediaSettings.serverSSRC)),
        ]
    }

    /// The loudest speakers of each room since the last call (at most five per room).
    func takeLevels() -> [String: [SpeakerLevel]] {
        let levels = outbox.withLock { outbox in
            defer { outbox.levels = [:] }
            return outbox.levels
        }
        return levels.mapValues { Array($0.values.sorted { $0.level > $1.level }.prefix(5)) }
    }

    /// Each member's network quality over the last reporting interval, by room: only members
    /// who sent or reported anything.
    func takeQuality() -> [String: [MemberQuality]] {
        outbox.withLock { outbox in
            defer { outbox.quality = [:] }
            return outbox.quality
        }
    }

    // MARK: Router thread

    private func run() {
        let core = MediaRouterCore(identity: identity)
        let output = SocketRouterOutput(socket: socket)
        var received = [UInt8](repeating: 0, count: 2048)
        // A copy that waits for a core reaches its listener late, and on a busy machine (a
        // fan-out of chat to thousands on the service thread, other processes) that wait is most
        // of a packet's time here. So, when configured, the thread asks to be real-time, given a
        // core as soon as a packet arrives, where the process may; and the budget makes it ordinary
        // again while it uses more than half a core (a flood), so it never takes the machine from
        // the rest.
        var budget: RealtimeBudget? = realtime && ThreadScheduling.setRealtime(true) ? RealtimeBudget() : nil
        realtimeNow.store(budget != nil, ordering: .relaxed)
        var nextLevels = (clock.map { Double($0.now()) } ?? MonotonicClock.milliseconds()) + 250
        var nextReport = nextLevels + 750
        var nextQuality = nextLevels + 1_750
        var nextOverdue = nextLevels
        // The latency histogram (10,001 buckets) is published at most four times a second of
        // monotonic time: a quiet moment comes after every burst of packets, and copying it
        // then cost more than the percentiles it feeds.
        var nextLatency = MonotonicClock.milliseconds()
        var publishedCount = 0
        while running.load(ordering: .relaxed) {
            let datagram = socket.receive(into: &received)
            if inboxFilled.load(ordering: .acquiring) {
                inboxFilled.store(false, ordering: .relaxed)
                for command in inbox.withLock({ inbox in defer { inbox = [] }; return inbox }) { core.apply(command) }
            }
            if let (length, from) = datagram {
                output.arrived = MonotonicClock.nanoseconds()
                var output = output
                core.receive(&received, length: length, from: from, now: clock.map { Double($0.now()) } ?? Double(output.arrived) / 1e6, output: &output)
                let counters = core.counters
                outbox.withLock { $0.counters = counters }
            }
            let now = clock.map { Double($0.now()) } ?? MonotonicClock.milliseconds()
            if now >= nextOverdue {
                nextOverdue = now + 10
                var output = output
                core.askOverdue(now: now, output: &output)
                core.precallTick(now: now, output: &output)
                let probes = core.probeFigures
                if !probes.isEmpty || outbox.withLock({ !$0.probes.isEmpty }) { outbox.withLock { $0.probes = probes } }
            }
            guard now >= nextLevels else { continue }
            nextLevels = now + 250
            if let change = budget?.observe(now: MonotonicClock.milliseconds(), cpu: ThreadScheduling.cpuMilliseconds()) {
                realtimeNow.store(ThreadScheduling.setRealtime(change) && change, ordering: .relaxed)
            }
            var timers = output
            core.tick(now: now, output: &timers)
            let levels = core.takeLevels(top: 5)
            var latency: LatencyHistogram?
            if output.latency.count != publishedCount, MonotonicClock.milliseconds() >= nextLatency {
                nextLatency = MonotonicClock.milliseconds() + 250
                publishedCount = output.latency.count
                latency = output.latency
            }
            let published = latency.map { ($0.percentile(0.5), $0.percentile(0.99), $0.maximum, $0.count) }
            outbox.withLock { outbox in
                for (room, heard) in levels {
                    for level in heard {
                        let earlier = outbox.levels[room]?[level.user]
                        outbox.levels[room, default: [:]][level.user] = SpeakerLevel(
                            user: level.user, level: max(level.level, earlier?.level ?? 0), vad: level.vad || earlier?.vad == true)
                    }
                }
                if let latency, let published {
                    outbox.latency = published
                    outbox.forwarding = latency
                }
            }
            if now >= nextReport {
                nextReport = now + 1_000
                var output = output
                core.sendReports(now: now, output: &output)
            }
            if now >= nextQuality {
                nextQuality = now + 2_000
                let quality = core.takeQuality()
                outbox.withLock { outbox in
                    for (room, members) in quality {
                        outbox.quality[room, default: []] += members
                        for member in members {
                            if let up = member.upMeasure {
                                outbox.legs.upLoss.observe(up.loss)
                                outbox.legs.upJitter.observe(up.jitter / 1000)
                            }
                            if let down = member.downMeasure {
                                outbox.legs.downLoss.observe(down.loss)
                                outbox.legs.downJitter.observe(down.jitter / 1000)
                            }
                        }
                    }
                }
            }
        }
    }
}
