/// Room leases in Redis: `majlis:lease:ROOM` holds the holder's mark with the lease's lifetime,
/// `majlis:place:ROOM` the node a free room is kept for; each operation is one Lua script, so no
/// node can come between a look and a write.
final class RedisLeaseBus: LeaseBus {
    static let keyPrefix = "majlis:lease:"
    static let hintPrefix = "majlis:place:"

    private let redis: RedisClient
    /// The registry entries' lifetime: an entry written `freshWithin` ms ago has this less that to live.
    private let registryLifetime: Int

    init(redis: RedisClient, registryLifetime: Int) {
        self.redis = redis
        self.registryLifetime = registryLifetime
    }

    func renew(room: String, holder: String, lifetime: Int) throws -> LeaseAnswer {
        let answer = try redis.command(["EVAL", Self.renewScript, "1", Self.keyPrefix + room, holder, String(lifetime)])
        switch answer {
        case .integer(1): return .renewed
        case .integer(2): return .taken
        default: return .heldBy(try self.holder(of: room) ?? "")
        }
    }

    func place(room: String, holder: String, lifetime: Int, placement: LeasePlacement) throws -> LeaseAnswer {
        let answer = try redis.command([
            "EVAL", Self.placeScript, "2", Self.keyPrefix + room, Self.hintPrefix + room, holder, String(lifetime), placement.node, placement.chosen,
            placement.mayHost ? "1" : "0", String(placement.hintLifetime), NodeRegistry.keyPrefix, String(registryLifetime - placement.freshWithin),
            "," + placement.peers.sorted().joined(separator: ",") + ",",
        ])
        guard case .array(let parts) = answer, case .integer(let verdict)? = parts.first else {
            throw RedisClient.Failure(description: "Redis answered the placement in an unknown form", answered: true)
        }
        let named = parts.dropFirst().first?.text ?? ""
        switch verdict {
        case 1: return .renewed
        case 2: return .taken
        case 3: return .reservedFor(named)
        default: return .heldBy(named)
        }
    }

    func release(room: String, holder: String) throws {
        try redis.command(["EVAL", Self.releaseScript, "1", Self.keyPrefix + room, holder])
    }

    var recoveredAt: Int64? { redis.recoveredAt }

    func ready() throws {
        // A connection Redis's restart closed fails once; the second PING makes a new one.
        if (try? redis.command(["PING"])) == nil { try redis.command(["PING"]) }
    }

    func holder(of room: String) throws -> String? {
        try redis.command(["GET", Self.keyPrefix + room]).text
    }

    /// Renews a lease that is this node's (1), takes one that is free (a new room, or one Redis
    /// forgot) (2), and answers 0 for one another node holds.
    static let renewScript = """
        local v = redis.call('GET', KEYS[1])
        if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
        if not v then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 2 end
        return 0
        """

    /// Renews (1) or refuses (0, and the holder) as `renewScript`; a free lease goes to the node
    /// the hint names, or else to the node chosen (ARGV[4]), or else to this node (ARGV[3]), each
    /// only while usable: this node if it may host (ARGV[5]), another if it is one of the peers
    /// this node verified (ARGV[9], comma-separated between commas) and its registry entry was
    /// written lately (time to live above ARGV[8]). Taken here: 2; kept for another node: 3 and
    /// its id.
    static let placeScript = """
        local v = redis.call('GET', KEYS[1])
        if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return {1} end
        if v then return {0, v} end
        local function usable(node)
          if node == ARGV[3] then return ARGV[5] == '1' end
          if not string.find(ARGV[9], ',' .. node .. ',', 1, true) then return false end
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
