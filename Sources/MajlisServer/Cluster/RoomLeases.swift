import Dispatch
import Foundation
import MajlisProtocol
import Synchronization

/// The rooms this node holds, each under a lease in Redis (`majlis:lease:ROOM`, naming the node,
/// with a lifetime of 2.5 s renewed twice a second) and a fence taken in the store: no room is
/// loaded by two nodes at once, and a node that kept a room past its lease (paused, cut off)
/// cannot write it. The lifetime is what a node's death costs its rooms' members before another
/// node may open them (with 4 s, members were back on their seats 4.3 s after a `kill -9`; with
/// 2.5 s, see `majlis bench cluster`); a node stalled longer than that loses its rooms.
///
/// - A room another live node holds is refused (`conflict`, naming that node and its address).
/// - A renewal Redis answers "held by another node" loses the room at once (`lost`: the node
///   stops serving it). A renewal that cannot reach Redis keeps the room: in a Redis outage no
///   other node can take it, and if only this node is cut off, the node that takes the room takes
///   a newer fence and this node's writes are refused (`Store.Fenced`), which loses it too.
/// - A lease Redis forgot (restarted empty) is written again by the renewal: the leases are
///   rebuilt from the nodes.
final class RoomLeases: Sendable {
    static let keyPrefix = "majlis:lease:"

    private let redis: RedisClient
    private let registry: NodeRegistry
    private let store: Store
    private let logger: Logger
    /// This node's mark on a lease: its id and process.
    private let holder: String
    let lifetime: Int
    let interval: Int
    /// The fence of each room held.
    private let leases = Mutex<[String: Int64]>([:])
    private let queue = DispatchQueue(label: "majlis.leases")
    /// The renewal timer; set once by `start`, cancelled by `stop`.
    private nonisolated(unsafe) var timer: DispatchSourceTimer?
    private let unreachable = Atomic<Bool>(false)
    private let lost = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Lost rooms, and writes refused for a stale fence, since the start.
    let counted = Mutex<(lost: Int, fenced: Int)>((0, 0))

    init(redis: RedisClient, registry: NodeRegistry, store: Store, logger: Logger, lifetime: Int = 2_500, interval: Int = 500) {
        self.redis = redis
        self.registry = registry
        self.store = store
        self.logger = logger
        holder = "\(registry.id) \(registry.instance)"
        self.lifetime = lifetime
        self.interval = interval
    }

    /// Takes room `id` for this node; returns the fence its writes must carry.
    func acquire(_ id: String) throws(ProtocolError) -> Int64 {
        let key = Self.keyPrefix + id
        do {
            // Taken when free (or already this node's) in one step: nobody can take it between
            // a look and a write.
            if try redis.command(["EVAL", Self.renewScript, "1", key, holder, String(lifetime)]) == .integer(0) {
                let current = try redis.command(["GET", key]).text ?? ""
                let node = String(current.split(separator: " ").first ?? "")
                let address = (registry.lastKnown.first { $0.id == node } ?? (try? registry.nodes())?.first { $0.id == node })?.signaling
                throw ProtocolError(
                    .conflict, "room \(id) is hosted on node \(node)\(address.map { " (\($0))" } ?? ""): connect there, or try again once it has moved",
                    host: .init(node: node, signaling: address))
            }
        } catch let error as ProtocolError {
            throw error
        } catch {
            logger.warning("cluster: cannot place room \(id): \(error)")
            throw ProtocolError(.internal, "rooms cannot be placed now: the cluster's registry is unreachable")
        }
        do {
            let fence = try store.takeFence(id)
            leases.withLock { $0[id] = fence }
            return fence
        } catch {
            release(id)
            logger.log(.error, "room \(id): store failed: \(error)", event: "store.error", fields: ["room": id, "error": "\(error)"])
            throw ProtocolError(.internal, "the server could not load room \(id)")
        }
    }

    /// Gives room `id` up (unloaded or ended here): another node may take it at once.
    func release(_ id: String) {
        guard leases.withLock({ $0.removeValue(forKey: id) }) != nil else { return }
        _ = try? redis.command(["EVAL", Self.releaseScript, "1", Self.keyPrefix + id, holder])
    }

    /// Room `id`'s write was refused for its stale fence: it is lost.
    func fenced(_ id: String) {
        counted.withLock { $0.fenced += 1 }
        lose(id, reason: "its store refused this node's write (another node took the room)")
    }

    /// Renews every lease each `interval`; `lost` is told of each room this node must stop serving.
    func start(lost: @escaping @Sendable (String) -> Void) {
        self.lost.withLock { $0 = lost }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(interval), repeating: .milliseconds(interval))
        timer.setEventHandler { [weak self] in self?.renew() }
        timer.resume()
        self.timer = timer
    }

    /// Stops renewing and gives every room up (the node is stopping; its rooms were drained).
    func stop() {
        timer?.cancel()
        queue.sync {}
        for id in leases.withLock({ Array($0.keys) }) { release(id) }
    }

    /// How many rooms this node holds.
    var held: Int { leases.withLock { $0.count } }


    private func renew() {
        for room in leases.withLock({ Array($0.keys) }) {
            do {
                let answer = try redis.command(["EVAL", Self.renewScript, "1", Self.keyPrefix + room, holder, String(lifetime)])
                if unreachable.exchange(false, ordering: .relaxed) { logger.info("cluster: room leases are renewed again") }
                if answer == .integer(0) { lose(room, reason: "its lease is held by another node") }
            } catch {
                if !unreachable.exchange(true, ordering: .relaxed) {
                    logger.warning("cluster: cannot renew room leases (rooms go on; the store's fences guard them): \(error)")
                }
            }
        }
    }

    private func lose(_ id: String, reason: String) {
        guard leases.withLock({ $0.removeValue(forKey: id) }) != nil else { return }
        counted.withLock { $0.lost += 1 }
        logger.log(.warning, "room \(id): this node no longer hosts it: \(reason)", event: "room.lost", fields: ["room": id])
        lost.withLock { $0 }?(id)
    }

    /// Renews a lease that is this node's, takes one that is free (a new room, or one Redis
    /// forgot) (1 or 2), and answers 0 for one another node holds.
    static let renewScript = """
        local v = redis.call('GET', KEYS[1])
        if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
        if not v then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 2 end
        return 0
        """

    static let releaseScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """
}
