/// Where the cluster's room leases live, each step one atomic operation: Redis for a real
/// cluster (`RedisLeaseBus`), an in-memory stand-in on a manual clock for tests of the lease's
/// life (`MemoryLeaseBus` in MajlisTestSupport). A holder is a node's mark, "NODE INSTANCE".
public protocol LeaseBus: Sendable {
    /// Renews `holder`'s lease on `room` for `lifetime` ms, or takes it when it is free.
    func renew(room: String, holder: String, lifetime: Int) throws -> LeaseAnswer

    /// Takes a free lease for `placement.node` when the room is placed there (see
    /// `LeasePlacement`); renews `holder`'s own; names the holder of a taken one.
    func place(room: String, holder: String, lifetime: Int, placement: LeasePlacement) throws -> LeaseAnswer

    /// Gives `holder`'s lease on `room` up (nothing when another holds it).
    func release(room: String, holder: String) throws

    /// Who holds `room`'s lease now.
    func holder(of room: String) throws -> String?

    /// Makes sure the bus answers now: a connection a restart broke is made again (and the bus
    /// counts as recovered, `recoveredAt`), so a lease is never taken on the first answer after
    /// an outage this node had not yet seen.
    func ready() throws

    /// When (monotonic ms, on the clock `RoomLeases` is given) the bus answered again after it
    /// could not be reached; nil if it never failed. Leases may have lapsed or been lost then.
    var recoveredAt: Int64? { get }
}

/// What a lease operation found.
public enum LeaseAnswer: Equatable, Sendable {
    /// The holder's own lease, renewed.
    case renewed
    /// It was free: now the holder's.
    case taken
    /// Another holder has it.
    case heldBy(String)
    /// Free, and kept for a few seconds for this other node, which is to open the room.
    case reservedFor(String)
}

/// How a free lease is placed: a hint already kept for a node wins while that node is usable,
/// else the node chosen by load, else this node. This node is usable while it takes rooms; another
/// while it is one of `peers` (active, its registry entry signed with the cluster's secret) and
/// reported to the registry within `freshWithin` ms: a node that died is not chosen, nor one whose
/// entry or hint someone else wrote into Redis.
public struct LeasePlacement: Sendable, Equatable {
    /// This node's id, and whether it takes rooms (it is not draining).
    public var node: String
    public var mayHost: Bool
    /// The node `RoomPlacement` chose.
    public var chosen: String
    /// How long (ms) a room is kept for the node chosen.
    public var hintLifetime: Int
    public var freshWithin: Int
    /// The other nodes that may be given a room: active, and verified by this node.
    public var peers: Set<String>

    public init(node: String, mayHost: Bool, chosen: String, hintLifetime: Int, freshWithin: Int, peers: Set<String>) {
        self.node = node
        self.mayHost = mayHost
        self.chosen = chosen
        self.hintLifetime = hintLifetime
        self.freshWithin = freshWithin
        self.peers = peers
    }
}
