import Dispatch
import Foundation
import MajlisProtocol
import Synchronization

/// The cluster's registry of live nodes, in Redis: each node keeps its `NodeInfo` under
/// `majlis:node:ID` with a time to live of `lifetime`, written again every `interval`, so a node
/// that dies (no goodbye) leaves the registry within `lifetime`; one that stops deletes its entry.
///
/// Redis holds only what the nodes can write again: when it is unreachable, running rooms are
/// not touched, reports fail (logged once per outage) and resume when it is back.
final class NodeRegistry: @unchecked Sendable {
    // Audited: `timer`, `report` and `drainAsked` are set by `join` and `start`, called once
    // from the server's start before anything reads them, and `timer` cancelled by `stop`;
    // `ticks` is touched on `queue` only.
    static let keyPrefix = "majlis:node:"
    /// `majlis:drain:ID` holds the instance an operator asked to drain (`requestDrain`).
    static let drainPrefix = "majlis:drain:"

    let redis: RedisClient
    let id: String
    let instance: String
    /// Milliseconds an entry lives without being written again, and between writes.
    let lifetime: Int
    let interval: Int
    private var report: (@Sendable () -> NodeInfo)?
    private var drainAsked: (@Sendable () -> Void)?
    private let logger: Logger
    private let queue = DispatchQueue(label: "majlis.registry")
    private var timer: DispatchSourceTimer?
    private let failing = Atomic<Bool>(false)
    private let known = Mutex<[NodeInfo]>([])
    /// Ticks of the timer (on `queue`): the list of live nodes is read at every tick, four a
    /// `interval`, and this node's entry written at every fourth, so a node that joins is in
    /// every other node's `hello` and placement within a quarter of an interval (with the list
    /// read once an interval, a new node was missing from the others' `hello` for up to a second).
    private var ticks = 0
    static let readsPerWrite = 4

    /// What entries are signed with: one another node did not sign is ignored (and counted).
    private let seal: ClusterSeal
    /// Entries found in the registry without this cluster's signature, since the start.
    let refused = Atomic<Int>(0)

    init(redis: RedisClient, id: String, instance: String, seal: ClusterSeal, lifetime: Int = 5_000, interval: Int = 1_000, logger: Logger) {
        self.redis = redis
        self.seal = seal
        self.id = id
        self.instance = instance
        self.lifetime = lifetime
        self.interval = interval
        self.logger = logger
    }

    private var key: String { Self.keyPrefix + id }

    /// Registers this node, whose entry `report` makes as it is now (called on the registry's
    /// queue from then on): an entry of the same id left by a process that died is waited out
    /// (at most its lifetime); one another live process keeps writing is refused.
    func join(report: @escaping @Sendable () -> NodeInfo) throws {
        self.report = report
        let monotonic = MonotonicClock()
        let deadline = monotonic.now() + Int64(lifetime + interval)
        while true {
            let entry = try encode(report())
            if try redis.command(["SET", key, entry, "PX", String(lifetime), "NX"]) != .null { break }
            // An entry this node cannot verify is waited out too (never written over): it may be
            // a live node's whose secret differs, which must not have a twin.
            let holder = try redis.command(["GET", key]).text.flatMap(decode)
            if holder?.instance == instance { break }
            guard monotonic.now() < deadline else {
                throw RedisClient.Failure(
                    description: holder.map { "node id \(id) is in use by a live node (\($0.signaling)): give this one another --node" }
                        ?? "node id \(id) is held in the registry by an entry this node cannot verify: is --cluster-secret (or --keys) the same on every node?",
                    answered: true)
            }
            Thread.sleep(forTimeInterval: 0.25)
        }
        let live = try nodes()
        known.withLock { $0 = live }
    }

    /// Writes this node's entry every `interval` from now on, and calls `drainAsked` (on a
    /// queue of its own) when an operator asks this node to drain.
    func start(drainAsked: @escaping @Sendable () -> Void) {
        self.drainAsked = drainAsked
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let tick = interval / Self.readsPerWrite
        timer.schedule(deadline: .now() + .milliseconds(tick), repeating: .milliseconds(tick))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        self.timer = timer
    }

    /// Stops writing and removes this node's entry (if still its own).
    func stop() {
        timer?.cancel()
        queue.sync {}
        do {
            let current = try redis.command(["GET", key]).text.flatMap(decode)
            if current?.instance == instance { try redis.command(["DEL", key]) }
        } catch {
            logger.warning("cluster: could not remove node \(id) from the registry (it expires by itself): \(error)")
        }
    }

    /// Writes this node's entry now, in turn with the timer's writes.
    func publish() {
        queue.sync { write() }
    }

    /// Node `id`'s entry as the registry has it now (nil if it has none, or cannot be asked).
    func entry(of id: String) -> NodeInfo? {
        (try? redis.command(["GET", Self.keyPrefix + id]).text).flatMap { $0.flatMap(decode) }
    }

    /// Asks `node` (a live node other than this one) to drain: it finds the request at its next
    /// report. For that process only: a node restarted since is not drained.
    func requestDrain(of node: NodeInfo) throws {
        try redis.command(["SET", Self.drainPrefix + node.id, node.instance, "PX", String(60_000)])
    }

    private func tick() {
        ticks += 1
        if ticks % Self.readsPerWrite == 0 { return write() }
        // Between writes only the list is read; failures are the writes' to report.
        if let live = try? nodes() { known.withLock { $0 = live } }
    }

    private func write() {
        guard let report else { return }
        do {
            try redis.command(["SET", key, try encode(report()), "PX", String(lifetime)])
            if case .string(let asked) = try redis.command(["GET", Self.drainPrefix + id]), asked == instance {
                try redis.command(["DEL", Self.drainPrefix + id])
                if let drainAsked { DispatchQueue.global().async(execute: drainAsked) }
            }
            let live = try nodes()
            known.withLock { $0 = live }
            if failing.exchange(false, ordering: .relaxed) { logger.info("cluster: the registry is reachable again") }
        } catch {
            if !failing.exchange(true, ordering: .relaxed) { logger.warning("cluster: cannot report to the registry (running rooms go on): \(error)") }
        }
    }

    /// The live nodes as the registry was last read (at most a quarter `interval` ago), without asking
    /// Redis: what a client is told it may connect to.
    var lastKnown: [NodeInfo] { known.withLock { $0 } }

    /// Whether this node's last report reached the registry.
    var reachable: Bool { !failing.load(ordering: .relaxed) }

    /// The live nodes, by id.
    func nodes() throws -> [NodeInfo] {
        var keys: [String] = []
        var cursor = "0"
        repeat {
            guard case .array(let parts) = try redis.command(["SCAN", cursor, "MATCH", Self.keyPrefix + "*", "COUNT", "200"]), parts.count == 2,
                let next = parts[0].text, case .array(let found) = parts[1]
            else { throw RedisClient.Failure(description: "Redis answered SCAN in an unknown form", answered: true) }
            keys += found.compactMap(\.text)
            cursor = next
        } while cursor != "0"
        guard !keys.isEmpty else { return [] }
        guard case .array(let values) = try redis.command(["MGET"] + keys) else { return [] }
        return values.compactMap { $0.text.flatMap(decode) }.sorted { $0.id < $1.id }
    }

    /// This node's entry as it is written: signed with the cluster's seal.
    private func encode(_ info: NodeInfo) throws -> String {
        seal.seal(String(decoding: try JSONEncoder().encode(info), as: UTF8.self))
    }

    /// An entry as read: nil (and counted) unless a node of this cluster signed it.
    private func decode(_ entry: String) -> NodeInfo? {
        guard let text = seal.open(entry), let info = try? JSONDecoder().decode(NodeInfo.self, from: Data(text.utf8)) else {
            if refused.add(1, ordering: .relaxed).oldValue == 0 {
                logger.warning("cluster: the registry holds an entry no node of this cluster signed (ignored); is Redis open to others, or is --cluster-secret not the same on every node?")
            }
            return nil
        }
        return info
    }
}
