import MajlisProtocol
import MajlisServer
import Synchronization

/// The cluster's lease bus in memory, on a manual clock: the same answers as Redis's scripts
/// (`RedisLeaseBus`), with what tests need besides: nodes that report to the registry (or stop),
/// an outage, and a restart that forgets everything.
public final class MemoryLeaseBus: LeaseBus {
    private struct Entry {
        var value: String
        var expires: Int64
    }

    private struct State {
        var leases: [String: Entry] = [:]
        var hints: [String: Entry] = [:]
        /// When each node last wrote its registry entry.
        var reports: [String: Int64] = [:]
        var down = false
        var recoveredAt: Int64?
    }

    public struct Unreachable: Error {}

    private let state = Mutex(State())
    private let clock: any MillisecondClock

    public init(clock: any MillisecondClock) {
        self.clock = clock
    }

    /// `node` writes its registry entry now.
    public func report(_ node: String) {
        let now = clock.now()
        state.withLock { $0.reports[node] = now }
    }

    /// While true, every operation fails as an unreachable Redis does; set false, the bus has
    /// recovered now.
    public var down: Bool {
        get { state.withLock { $0.down } }
        set {
            let now = clock.now()
            state.withLock { state in
                if state.down && !newValue { state.recoveredAt = now }
                state.down = newValue
            }
        }
    }

    /// Forgets every lease and hint, as a Redis restarted without persistence does (the nodes'
    /// connections broke: the bus has recovered now).
    public func forget() {
        let now = clock.now()
        state.withLock { state in
            state.leases = [:]
            state.hints = [:]
            state.recoveredAt = now
        }
    }

    public var recoveredAt: Int64? { state.withLock { $0.recoveredAt } }

    public func ready() throws {
        if down { throw Unreachable() }
    }

    public func renew(room: String, holder: String, lifetime: Int) throws -> LeaseAnswer {
        let now = clock.now()
        return try state.withLock { state in
            if let answer = try Self.held(room, by: holder, lifetime: lifetime, now: now, in: &state) { return answer }
            state.leases[room] = Entry(value: holder, expires: now + Int64(lifetime))
            return .taken
        }
    }

    public func place(room: String, holder: String, lifetime: Int, placement: LeasePlacement) throws -> LeaseAnswer {
        let now = clock.now()
        return try state.withLock { state in
            if let answer = try Self.held(room, by: holder, lifetime: lifetime, now: now, in: &state) { return answer }
            func usable(_ node: String) -> Bool {
                if node == placement.node { return placement.mayHost }
                guard placement.peers.contains(node) else { return false }
                return state.reports[node].map { now - $0 < Int64(placement.freshWithin) } ?? false
            }
            var target = state.hints[room].flatMap { $0.expires > now ? $0.value : nil }
            if target == nil || !usable(target!) {
                target = usable(placement.chosen) ? placement.chosen : placement.node
            }
            if target == placement.node {
                state.leases[room] = Entry(value: holder, expires: now + Int64(lifetime))
                state.hints[room] = nil
                return .taken
            }
            state.hints[room] = Entry(value: target!, expires: now + Int64(placement.hintLifetime))
            return .reservedFor(target!)
        }
    }

    /// Renews `holder`'s live lease on `room` (`renewed`) or names another's (`heldBy`); nil
    /// when the lease is free. Throws while the bus is down.
    private static func held(_ room: String, by holder: String, lifetime: Int, now: Int64, in state: inout State) throws -> LeaseAnswer? {
        guard !state.down else { throw Unreachable() }
        guard let lease = state.leases[room], lease.expires > now else { return nil }
        guard lease.value == holder else { return .heldBy(lease.value) }
        state.leases[room]?.expires = now + Int64(lifetime)
        return .renewed
    }

    public func release(room: String, holder: String) throws {
        try state.withLock { state in
            guard !state.down else { throw Unreachable() }
            if state.leases[room]?.value == holder { state.leases[room] = nil }
        }
    }

    public func holder(of room: String) throws -> String? {
        let now = clock.now()
        return try state.withLock { state in
            guard !state.down else { throw Unreachable() }
            return state.leases[room].flatMap { $0.expires > now ? $0.value : nil }
        }
    }
}
