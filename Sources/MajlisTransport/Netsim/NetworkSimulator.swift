import Foundation

#if canImport(Glibc)
import Glibc
import MajlisProtocol
#endif

/// A UDP relay that impairs traffic like a weak mobile network (`majlis netsim`): clients send to
/// it instead of the server; each client gets its own upstream socket (so the server sees one
/// address per client) and its own loss and delay in each direction.
public final class NetworkSimulator: @unchecked Sendable {
    // Audited: `flows`, `queue` and `nextSeed` are used under `lock` only.
    public struct Settings: Sendable {
        public var loss: Double
        public var meanBurst: Double
        public var delay: Double
        public var jitter: Double
        public var reorder: Bool
        public var seed: UInt64
        /// A bottleneck in each direction: bits per second counting IPv4 and UDP headers (nil: none),
        /// and how many milliseconds of packets its drop-tail queue holds.
        public var rate: Double?
        public var queue: Double
        public init(
            loss: Double = 0, meanBurst: Double = 1, delay: Double = 0, jitter: Double = 0, reorder: Bool = false, seed: UInt64 = 1,
            rate: Double? = nil, queue: Double = 300
        ) {
            self.loss = loss
            self.meanBurst = meanBurst
            self.delay = delay
            self.jitter = jitter
            self.reorder = reorder
            self.seed = seed
            self.rate = rate
            self.queue = queue
        }
    }

    private final class Flow: @unchecked Sendable {  // mutated under the simulator's lock only
        let client: UDPAddress
        let upstream: UDPSocket
        var toServer: PathImpairment
        var toClient: PathImpairment
        init(client: UDPAddress, upstream: UDPSocket, toServer: PathImpairment, toClient: PathImpairment) {
            self.client = client
            self.upstream = upstream
            self.toServer = toServer
            self.toClient = toClient
        }
    }

    private struct Pending {
        var at: Double
        var bytes: [UInt8]
        var socket: UDPSocket
        var to: UDPAddress
    }

    public let listener: UDPSocket
    public let server: UDPAddress
    public let settings: Settings
    private let lock = NSLock()
    private var flows: [UDPAddress: Flow] = [:]
    private var queue: [Pending] = []
    private var nextSeed: UInt64
    private var running = true
    /// Packets of one direction: relayed, dropped, and of those dropped how many by a full queue.
    public struct Counts: Sendable, Equatable {
        public var sent = 0
        public var lost = 0
        public var queueDrops = 0
        public init() {}
    }

    private var counts = (up: Counts(), down: Counts())
    /// Client ports whose network is cut (nil in the set: every client's).
    private var cut: Set<Int?> = []

    /// Packets relayed and dropped so far, toward the server (up) and toward clients (down); of
    /// the dropped, how many a full bottleneck queue dropped.
    public var counted: (up: Counts, down: Counts) { lock.withLock { counts } }

    /// Listens on `host:port` and relays to `upstream`.
    public init(host: String, port: Int, upstream: UDPAddress, settings: Settings) throws(MediaError) {
        listener = try UDPSocket(host: host, port: port, receiveTimeoutMilliseconds: 50)
        server = upstream
        self.settings = settings
        nextSeed = settings.seed
        Thread.detachNewThread { self.receive(on: self.listener, flow: nil) }
        Thread.detachNewThread { self.sendLoop() }
    }

    public func stop() { lock.withLock { running = false } }

    /// Cuts (or restores) the network of the client sending from `clientPort`, or of every
    /// client: nothing it sends or is sent gets through, as on a dead link.
    public func setCut(_ isCut: Bool, clientPort: Int? = nil) {
        lock.lock()
        defer { lock.unlock() }
        if isCut { cut.insert(clientPort) } else { cut.remove(clientPort) }
    }

    private func isCut(_ client: UDPAddress) -> Bool { cut.contains(nil) || cut.contains(Int(client.port)) }

    private var isRunning: Bool { lock.withLock { running } }

    private func impairment() -> PathImpairment {
        nextSeed &+= 1
        return PathImpairment(
            loss: settings.loss, meanBurst: settings.meanBurst, delay: settings.delay, jitter: settings.jitter, reorder: settings.reorder,
            seed: nextSeed, rate: settings.rate, queueLimit: settings.queue)
    }

    /// Receives on the listener (from clients) or on a flow's upstream socket (from the server).
    private func receive(on socket: UDPSocket, flow: Flow?) {
        var buffer = [UInt8](repeating: 0, count: 2048)
        while isRunning {
            guard let (length, from) = socket.receive(into: &buffer) else { continue }
            let bytes = Array(buffer.prefix(length))
            let now = MonotonicClock.milliseconds()
            lock.lock()
            if let flow {
                if isCut(flow.client) {
                    counts.down.lost += 1
                } else if let at = flow.toClient.release(at: now, bytes: length) {
                    queue.append(Pending(at: at, bytes: bytes, socket: listener, to: flow.client))
                    counts.down.sent += 1
                } else {
                    counts.down.lost += 1
                    counts.down.queueDrops = flows.values.reduce(0) { $0 + $1.toClient.queueDrops }
                }
                lock.unlock()
                continue
            }
            var current = flows[from]
            var started: Flow?
            if current == nil, let upstream = try? UDPSocket(host: "0.0.0.0", port: 0, receiveTimeoutMilliseconds: 50) {
                let made = Flow(client: from, upstream: upstream, toServer: impairment(), toClient: impairment())
                flows[from] = made
                current = made
                started = made
            }
            if isCut(from) {
                counts.up.lost += 1
            } else if let current, let at = current.toServer.release(at: now, bytes: length) {
                queue.append(Pending(at: at, bytes: bytes, socket: current.upstream, to: server))
                counts.up.sent += 1
            } else {
                counts.up.lost += 1
                counts.up.queueDrops = flows.values.reduce(0) { $0 + $1.toServer.queueDrops }
            }
            lock.unlock()
            if let started { Thread.detachNewThread { self.receive(on: started.upstream, flow: started) } }
        }
    }

    private func sendLoop() {
        while isRunning {
            let now = MonotonicClock.milliseconds()
            let due: [Pending] = lock.withLock {
                let ready = queue.filter { $0.at <= now }.sorted { $0.at < $1.at }
                queue.removeAll { $0.at <= now }
                return ready
            }
            for packet in due { packet.socket.send(packet.bytes, to: packet.to) }
            usleep(1_000)
        }
    }
}
