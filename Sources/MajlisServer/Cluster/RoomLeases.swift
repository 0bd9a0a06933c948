import Dispatch
import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// The rooms this node holds, each under a lease in Redis (`majlis:lease:ROOM`, naming the node,
/// with a lifetime of 2.5 s renewed twice a second) and a fence taken in the store: no room is
/// loaded by two nodes at once, and a node that kept a room past its lease (paused, cut off)
/// cannot write it. The lifetime is what a node's death costs its rooms' members before another
/// node may open them (with 4 s, members were back on their seats 4.3 s after a `kill -9`; with
/// 2.5 s, see `majlis bench cluster`); a node stalled longer than that loses its rooms.
///
/// - A room another live node holds is refused (`conflict`, naming that node and its address).
/// - A room open nowhere that a member asks for is placed (`RoomPlacement`): kept here, or
///   refused with `conflict` naming the node chosen for it, which a hint in Redis
///   (`majlis:place:ROOM`, for 5 s) reserves it for, so that every node asked meanwhile sends its
///   members to the same node. A hint naming a node that has not reported for two registry
///   intervals (it died) or that now drains is passed over.
/// - A renewal Redis answers "held by another node" loses the room at once (`lost`: the node
///   stops serving it). A renewal that cannot reach Redis keeps the room: in a Redis outage no
///   other node can take it, and if only this node is cut off, the node that takes the room takes
///   a newer fence and this node's writes are refused (`Store.Fenced`), which loses it too.
/// - A lease Redis forgot (restarted empty) is written again by the renewal: the leases are
///   rebuilt from the nodes.
final class RoomLeases: Sendable {
    static let keyPrefix = "majlis:lease:"
    static let hintPrefix = "majlis:place:"
    /// How long (ms) a room's hint keeps it for the node chosen.
    static let hintLifetime = 5_000

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
    /// This node's load now, and whether it may take rooms (it is not draining).
    private let here = Mutex<(@Sendable () -> (candidate: RoomPlacement.Candidate, mayHost: Bool))?>(nil)
    private let placement = Mutex(RoomPlacement())

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

    /// Takes room `id` for this node; returns the fence its writes must carry. With `placing`
    /// (a member asks for it), or on a draining node, a room open nowhere may be placed on
    /// another node instead (`conflict` naming it); else (an operator's call, or this node's own
    /// work) this node takes it.
    func acquire(_ id: String, placing: Bool = false) throws(ProtocolError) -> Int64 {
        let key = Self.keyPrefix + id
        do {
            // Taken when free (or already this node's) in one step: nobody can take it between
            // a look and a write.
            let answer: RedisClient.Reply
            // A draining node places every room it is asked for, as it may keep none.
            if let here = here.withLock({ $0 }).map({ $0() }), placing || !here.mayHost {
                let (me, mayHost) = here
                let others = registry.lastKnown.filter { $0.id != registry.id && $0.state == .active }
                    .map { RoomPlacement.Candidate(id: $0.id, members: $0.members, rooms: $0.rooms) }
                var random = SystemRandomNumberGenerator()
                let now = MonotonicClock.wholeMilliseconds()
                let chosen = placement.withLock { $0.choose(now: now, me: me, mayHost: mayHost, others: others, random: &random) }
                answer = try redis.command([
                    "EVAL", Self.placeScript, "2", key, Self.hintPrefix + id, holder, String(lifetime), registry.id, chosen,
                    mayHost ? "1" : "0", String(Self.hintLifetime), NodeRegistry.keyPrefix, String(registry.lifetime - 2 * registry.interval),
                ])
            } else {
                answer = try redis.command(["EVAL", Self.renewScript, "1", key, holder, String(lifetime)])
            }
            var verdict: Int64?
            var named = ""
            switch answer {
            case .integer(let value): verdict = value
            case .array(let parts):
                if case .integer(let value)? = parts.first { verdict = value }
                named = parts.dropFirst().first?.text ?? ""
            default: break
            }
            if verdict == 0 {
                let current = try redis.command(["GET", key]).text ?? ""
                throw refusal(id, node: String(current.split(separator: " ").first ?? ""), opening: false)
            }
            if verdict == 3 { throw refusal(id, node: named, opening: true) }
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

    /// `conflict` for room `id`, which `node` hosts (or is chosen to open).
    private func refusal(_ id: String, node: String, opening: Bool) -> ProtocolError {
        let address = (registry.lastKnown.first { $0.id == node } ?? (try? registry.nodes())?.first { $0.id == node })?.signaling
        let place = "node \(node)\(address.map { " (\($0))" } ?? "")"
        return ProtocolError(
            .conflict,
            opening ? "room \(id) opens on \(place): connect there" : "room \(id) is hosted on \(place): connect there, or try again once it has moved",
            host: .init(node: node, signaling: address))
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
    /// `here` tells this node's load and whether it takes rooms, for placing them.
    func start(here: @escaping @Sendable () -> (candidate: RoomPlacement.Candidate, mayHost: Bool), lost: @escaping @Sendable (String) -> Void) {
        self.lost.withLock { $0 = lost }
        self.here.withLock { $0 = here }
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

    /// `acquire` with placement: renews (1) or refuses (0, the holder) as `renewScript`; a free
    /// lease goes to the node the hint names, or else to the node chosen (ARGV[4]), or else to
    /// this node (ARGV[3]), each only while usable: this node if it may host (ARGV[5]), another
    /// if its registry entry was written lately (time to live above ARGV[8]). Taken here: 2;
    /// reserved for another node: 3 and its id.
    static let placeScript = """
        local v = redis.call('GET', KEYS[1])
        if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return {1} end
        if v then return {0, v} end
        local function usable(node)
          if node == ARGV[3] then return ARGV[5] == '1' end
          return redis.call('PTTL', ARGV[7] .. node) > tonumber(ARGV[8])
        end
        local target = redis.call('GET', KEYS[2])
        if not target or not usable(target) then
          target = ARGV[4]
          if not usable(target) then target = ARGV[3] end
        end
        if target == ARGV[3] then
          redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
          redis.call('DEL', KEYS[2])
          return {2}
        end
        redis.call('SET', KEYS[2], target, 'PX', ARGV[6])
        return {3, target}
        """

    static let releaseScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """
}
