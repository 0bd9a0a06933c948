import Dispatch
import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// The rooms this node holds, each under a lease on the bus (Redis: `majlis:lease:ROOM`, naming
/// the node, with a lifetime of 2.5 s renewed twice a second) and a fence taken in the store: no room is
/// loaded by two nodes at once, and a node that kept a room past its lease (paused, cut off)
/// cannot write it. The lifetime is what a node's death costs its rooms' members before another
/// node may open them (with 4 s, members were back on their seats 4.3 s after a `kill -9`; with
/// 2.5 s, see `majlis bench cluster`); a node stalled longer than that loses its rooms.
///
/// - A room another live node holds is refused (`conflict`, naming that node and its address).
/// - A room open nowhere that a member asks for is placed (`RoomPlacement`): kept here, or
///   refused with `conflict` naming the node chosen for it, which a hint on the bus
///   (`majlis:place:ROOM`, for 5 s) reserves it for, so that every node asked meanwhile sends its
///   members to the same node. A hint naming a node that has not reported for two registry
///   intervals (it died) or that now drains is passed over.
/// - A renewal Redis answers "held by another node" loses the room at once (`lost`: the node
///   stops serving it). A renewal that cannot reach Redis keeps the room: in a Redis outage no
///   other node can take it, and if only this node is cut off, the node that takes the room takes
///   a newer fence and this node's writes are refused (`Store.Fenced`), which loses it too.
/// - A lease Redis forgot (restarted empty) is written again by the renewal: the leases are
///   rebuilt from the nodes.
public final class RoomLeases: Sendable {
    /// How long (ms) a room's hint keeps it for the node chosen.
    static let hintLifetime = 5_000

    private let bus: any LeaseBus
    private let store: Store
    private let logger: Logger
    /// This node's id, and its mark on a lease: its id and process.
    private let node: String
    private let holder: String
    /// The live nodes as the registry last found them.
    private let known: @Sendable () -> [NodeInfo]
    private let lookup: @Sendable (String) -> NodeInfo?
    /// Milliseconds a registry report may be old for its node to be chosen for a room.
    private let freshWithin: Int
    /// Monotonic milliseconds, for the placement's memory of rooms sent.
    private let clock: any MillisecondClock
    /// Waits so many milliseconds (the loader queue's thread; a test moves its clock instead).
    private let pause: @Sendable (Int) -> Void
    public let lifetime: Int
    public let interval: Int
    /// A room held: its fence, and when (monotonic ms) its lease was last known to be this
    /// node's: the start of the last renewal the bus answered.
    private struct Lease {
        var fence: Int64
        var confirmed: Int64
    }
    private let leases = Mutex<[String: Lease]>([:])
    private let queue = DispatchQueue(label: "majlis.leases")
    /// The renewal timer; set once by `start`, cancelled by `stop`.
    private nonisolated(unsafe) var timer: DispatchSourceTimer?
    private let unreachable = Atomic<Bool>(false)
    private let lost = Mutex<(@Sendable (String) -> Void)?>(nil)
    /// This node's load now, and whether it may take rooms (it is not draining).
    private let here = Mutex<(@Sendable () -> (candidate: RoomPlacement.Candidate, mayHost: Bool))?>(nil)
    private let placement = Mutex(RoomPlacement())

    /// Lost rooms, and writes refused for a stale fence, since the start.
    public let counted = Mutex<(lost: Int, fenced: Int)>((0, 0))

    /// Leases on `bus` for node `node` (process `instance`); `known` lists the live nodes as the
    /// registry last found them, `freshWithin` how recent a report must be for its node to be
    /// given a room; `lookup` reads a node's entry that `known` does not have yet (one that has
    /// just joined).
    public init(
        bus: any LeaseBus, node: String, instance: String, known: @escaping @Sendable () -> [NodeInfo], freshWithin: Int, store: Store,
        logger: Logger, clock: any MillisecondClock = MonotonicClock(), lifetime: Int = 2_500, interval: Int = 500,
        lookup: @escaping @Sendable (String) -> NodeInfo? = { _ in nil },
        pause: @escaping @Sendable (Int) -> Void = { Thread.sleep(forTimeInterval: Double($0) / 1000) }
    ) {
        self.lookup = lookup
        self.pause = pause
        self.bus = bus
        self.node = node
        holder = "\(node) \(instance)"
        self.known = known
        self.freshWithin = freshWithin
        self.store = store
        self.logger = logger
        self.clock = clock
        self.lifetime = lifetime
        self.interval = interval
    }

    /// Takes room `id` for this node; returns the fence its writes must carry. With `placing`
    /// (a member asks for it), or on a draining node, a room open nowhere may be placed on
    /// another node instead (`conflict` naming it); else (an operator's call, or this node's own
    /// work) this node takes it.
    public func acquire(_ id: String, placing: Bool = false) throws(ProtocolError) -> Int64 {
        do {
            try bus.ready()
            settle()
            let answer: LeaseAnswer
            // A draining node places every room it is asked for, as it may keep none.
            if let here = here.withLock({ $0 }).map({ $0() }), placing || !here.mayHost {
                let others = known().filter { $0.id != node && $0.state == .active }
                    .map { RoomPlacement.Candidate(id: $0.id, members: $0.members, rooms: $0.rooms) }
                let peers = Set(others.map(\.id))
                var random = SystemRandomNumberGenerator()
                let now = clock.now()
                let chosen = placement.withLock { $0.choose(now: now, me: here.candidate, mayHost: here.mayHost, others: others, random: &random) }
                answer = try bus.place(
                    room: id, holder: holder, lifetime: lifetime,
                    placement: LeasePlacement(node: node, mayHost: here.mayHost, chosen: chosen, hintLifetime: Self.hintLifetime, freshWithin: freshWithin,
                        peers: peers))
            } else {
                answer = try bus.renew(room: id, holder: holder, lifetime: lifetime)
            }
            switch answer {
            case .renewed, .taken: break
            case .heldBy(let other): throw refusal(id, node: String(other.split(separator: " ").first ?? ""), opening: false)
            case .reservedFor(let other): throw refusal(id, node: other, opening: true)
            }
        } catch let error as ProtocolError {
            throw error
        } catch {
            logger.warning("cluster: cannot place room \(id): \(error)")
            throw ProtocolError(.internal, Self.unplaceable)
        }
        let asked = clock.now()
        do {
            let fence = try store.takeFence(id)
            leases.withLock { $0[id] = Lease(fence: fence, confirmed: asked) }
            return fence
        } catch {
            try? bus.release(room: id, holder: holder)
            logger.log(.error, "room \(id): store failed: \(error)", event: "store.error", fields: ["room": id, "error": "\(error)"])
            throw ProtocolError(.internal, "the server could not load room \(id)")
        }
    }

    /// How long (ms) after the bus recovers from an outage no lease is taken: what the outage
    /// let lapse (Redis paused or down past a lease's 2.5 s) or lost (restarted empty) is written
    /// again by the nodes that hold those rooms at their next renewal, at most `interval` after
    /// they reach Redis again; a lease's lifetime besides covers a node that reaches it later
    /// than this one. Without the wait, a member asking at another node the instant Redis
    /// answered had a living room taken from its node (`ClusterTests`).
    var settling: Int { lifetime + interval }

    /// Waits until the bus has been back for `settling` ms, if it recovered lately.
    private func settle() {
        guard let recovered = bus.recoveredAt else { return }
        let left = recovered + Int64(settling) - clock.now()
        guard left > 0 else { return }
        logger.info("cluster: the registry is back; rooms are taken again in \(left) ms, once their nodes have written their leases")
        pause(Int(left))
    }

    static let unplaceable = "rooms cannot be placed now: the cluster's registry is unreachable"

    /// Whether `error` says no room can be placed now (the server API answers it 503).
    static func isUnplaceable(_ error: ProtocolError) -> Bool { error.code == .internal && error.message == unplaceable }

    /// `conflict` for room `id`, which `node` hosts (or is chosen to open).
    private func refusal(_ id: String, node: String, opening: Bool) -> ProtocolError {
        let address = (known().first { $0.id == node } ?? lookup(node))?.signaling
        let place = "node \(node)\(address.map { " (\($0))" } ?? "")"
        return ProtocolError(
            .conflict,
            opening ? "room \(id) opens on \(place): connect there" : "room \(id) is hosted on \(place): connect there, or try again once it has moved",
            host: .init(node: node, signaling: address))
    }

    /// Gives room `id` up (unloaded or ended here): another node may take it at once.
    public func release(_ id: String) {
        guard leases.withLock({ $0.removeValue(forKey: id) }) != nil else { return }
        try? bus.release(room: id, holder: holder)
    }

    /// Room `id`'s write was refused for its stale fence: it is lost.
    public func fenced(_ id: String) {
        counted.withLock { $0.fenced += 1 }
        lose(id, reason: "its store refused this node's write (another node took the room)")
    }

    /// Tells `lost` of each room this node must stop serving, and `here` this node's load and
    /// whether it takes rooms (for placing them). Without `start`, nothing is renewed but by
    /// `renewAll`; `timer: false` leaves the renewals to the caller.
    public func start(
        here: @escaping @Sendable () -> (candidate: RoomPlacement.Candidate, mayHost: Bool), timer: Bool = true,
        lost: @escaping @Sendable (String) -> Void
    ) {
        self.lost.withLock { $0 = lost }
        self.here.withLock { $0 = here }
        guard timer else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(interval), repeating: .milliseconds(interval))
        timer.setEventHandler { [weak self] in self?.renewAll() }
        timer.resume()
        self.timer = timer
    }

    /// Stops renewing and gives every room up (the node is stopping; its rooms were drained).
    public func stop() {
        timer?.cancel()
        queue.sync {}
        for id in leases.withLock({ Array($0.keys) }) { release(id) }
    }

    /// How many rooms this node holds.
    public var held: Int { leases.withLock { $0.count } }

    /// Whether this node may still answer for room `id` (nil), or the refusal to give: called
    /// before each op on the room's queue. A lease renewed within the last `lifetime - interval`
    /// ms is this node's beyond doubt; an older one (the node was paused, or stalled, past its
    /// renewals) is asked of the bus first, so no op queued meanwhile is answered by a node that
    /// lost the room, reads included. A bus that cannot be asked keeps the room (as `renewAll`).
    public func confirm(_ id: String) -> ProtocolError? {
        let now = clock.now()
        guard let lease = leases.withLock({ $0[id] }) else {
            return ProtocolError(.conflict, "room \(id) is no longer hosted on this node: join it again")
        }
        // A bus known to be unreachable is not asked again for every op (a Redis that does not
        // answer would hold each up for the client's timeout); the renewals find it back.
        guard now - lease.confirmed >= Int64(lifetime - interval), !unreachable.load(ordering: .relaxed) else { return nil }
        do {
            let answer = try bus.renew(room: id, holder: holder, lifetime: lifetime)
            if case .heldBy(let other) = answer {
                lose(id, reason: "its lease is held by another node")
                return refusal(id, node: String(other.split(separator: " ").first ?? ""), opening: false)
            }
            if case .taken = answer, !fenceIsNewest(id, lease.fence) {
                lose(id, reason: "another node held it meanwhile", retaken: true)
                return ProtocolError(.conflict, "room \(id) is no longer hosted on this node: join it again")
            }
            leases.withLock { if $0[id] != nil { $0[id]?.confirmed = now } }
            return nil
        } catch {
            cannotRenew(error)
            return nil
        }
    }

    /// Whether `fence` is still room `id`'s newest in the store (a lease taken back after it
    /// lapsed: no other node took the room meanwhile). A store that cannot say keeps the room; its
    /// fences refuse any stale write.
    private func fenceIsNewest(_ id: String, _ fence: Int64) -> Bool {
        guard let newest = try? store.fence(of: id) else { return true }
        return newest == fence
    }

    /// Renews every lease held (the timer's work): one another node holds now is lost; one the
    /// bus cannot be asked about is kept (no other node can take it meanwhile, and the store's
    /// fences guard it if only this node is cut off).
    public func renewAll() {
        for (room, lease) in leases.withLock({ $0 }) {
            let asked = clock.now()
            do {
                let answer = try bus.renew(room: room, holder: holder, lifetime: lifetime)
                if unreachable.exchange(false, ordering: .relaxed) { logger.info("cluster: room leases are renewed again") }
                switch answer {
                case .heldBy: lose(room, reason: "its lease is held by another node")
                case .taken where !fenceIsNewest(room, lease.fence): lose(room, reason: "another node held it meanwhile", retaken: true)
                default: leases.withLock { if $0[room] != nil { $0[room]?.confirmed = asked } }
                }
            } catch {
                cannotRenew(error)
            }
        }
    }

    /// The bus could not be asked: marked unreachable, said once per outage (whether a renewal
    /// or an op's check found it).
    private func cannotRenew(_ error: any Error) {
        if !unreachable.exchange(true, ordering: .relaxed) {
            logger.warning("cluster: cannot renew room leases (rooms go on; the store's fences guard them): \(error)")
        }
    }

    /// Stops holding room `id`. `retaken`: the renewal that found it lost wrote this node's lease
    /// again (the bus had none: the node that took the room meanwhile let go of it, or stalled
    /// past its own lease), so it is given back at once; kept, it would take the room from that
    /// node at its next renewal while this one serves it no more.
    private func lose(_ id: String, reason: String, retaken: Bool = false) {
        guard leases.withLock({ $0.removeValue(forKey: id) }) != nil else { return }
        if retaken { try? bus.release(room: id, holder: holder) }
        counted.withLock { $0.lost += 1 }
        logger.log(.warning, "room \(id): this node no longer hosts it: \(reason)", event: "room.lost", fields: ["room": id])
        lost.withLock { $0 }?(id)
    }
}
