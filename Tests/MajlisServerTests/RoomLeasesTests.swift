import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Synchronization
import Testing

/// The life of a room's lease on a manual clock, against the bus in memory: taken, renewed,
/// lapsed and taken by another node with a newer fence, lost; kept through an outage and written
/// again after a restart; placed by load on a node that reports, and never on one that stopped.
/// (`ClusterTests` runs the same against real Redis and PostgreSQL.)
struct RoomLeasesTests {
    /// Two or three nodes' leases on one bus and one store.
    final class Cluster: Sendable {
        let clock = ManualClock(now: SystemClock().now())
        let bus: MemoryLeaseBus
        let store: Store
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-leases-\(UUID().uuidString)").path
        /// The registry as every node last read it.
        let known = Mutex<[NodeInfo]>([])
        /// Rooms each node was told it lost.
        let lost = Mutex<[String: [String]]>([:])

        init() throws {
            bus = MemoryLeaseBus(clock: clock)
            store = try Store(directory: directory)
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        /// Node `id`'s leases, with `members` and `rooms` as its load; listed in the registry as active.
        /// A wait of a node's, on the manual clock, while `holder` renews every half second as its timer does.
        func waiting(renewing holder: RoomLeases) -> @Sendable (Int) -> Void {
            { [clock] milliseconds in
                for _ in 0..<(milliseconds / 500) {
                    clock.advance(by: .seconds(0.5))
                    holder.renewAll()
                }
                clock.advance(by: Int64(milliseconds % 500))
            }
        }

        /// `pause`: what the node's wait for the bus to settle does (by default, moves the clock).
        func node(_ id: String, members: Int = 0, rooms: Int = 0, draining: Bool = false, pause: (@Sendable (Int) -> Void)? = nil) -> RoomLeases {
            let info = NodeInfo(
                id: id, instance: "i-\(id)", signaling: "ws://\(id).example:7880/v1/signal", media: "\(id).example:7882", state: draining ? .draining : .active,
                rooms: rooms, members: members, packetsPerSecond: 0, cpu: 0, startedAt: 0, reportedAt: clock.now())
            known.withLock { $0.append(info) }
            bus.report(id)
            let leases = RoomLeases(
                bus: bus, node: id, instance: info.instance, known: { [self] in self.known.withLock { $0 } }, freshWithin: 2_000, store: store,
                logger: .silent, clock: clock, pause: pause ?? { [clock] in clock.advance(by: Int64($0)) })
            leases.start(
                here: { (RoomPlacement.Candidate(id: id, members: members, rooms: rooms), !draining) }, timer: false,
                lost: { [self] room in self.lost.withLock { $0[id, default: []].append(room) } })
            return leases
        }
    }

    @Test func aRoomHasOneHolderUntilItsLeaseLapses() throws {
        let cluster = try Cluster()
        let a = cluster.node("a")
        let b = cluster.node("b")
        let first = try a.acquire("hall")
        let refused = #expect(throws: ProtocolError.self) { try b.acquire("hall") }
        #expect(refused?.code == .conflict && refused?.host == ProtocolError.Host(node: "a", signaling: "ws://a.example:7880/v1/signal"))
        // Renewed in time, it stays a's.
        for _ in 0..<4 {
            cluster.clock.advance(by: .seconds(2.4))
            a.renewAll()
            #expect(throws: ProtocolError.self) { try b.acquire("hall") }
        }
        // a falls silent (paused, cut off) past the lifetime: b takes the room with a newer fence.
        cluster.clock.advance(by: .seconds(2.6))
        let second = try b.acquire("hall")
        #expect(second > first)
        #expect(a.held == 1 && cluster.lost.withLock { $0["a"] } == nil)
        // a's next renewal finds the lease b's: the room is lost to a.
        a.renewAll()
        #expect(a.held == 0 && cluster.lost.withLock { $0["a"] } == ["hall"] && a.counted.withLock { $0.lost } == 1)
        #expect(b.held == 1)
    }

    @Test func aReleasedRoomIsFreeAtOnceAndAFencedWriteLosesIt() throws {
        let cluster = try Cluster()
        let a = cluster.node("a")
        let b = cluster.node("b")
        _ = try a.acquire("hall")
        a.release("hall")
        _ = try b.acquire("hall")
        b.fenced("hall")
        #expect(b.held == 0 && cluster.lost.withLock { $0["b"] } == ["hall"] && b.counted.withLock { $0.fenced } == 1)
    }

    /// The bus unreachable: held rooms stay held (and are not lost), a room open nowhere waits
    /// with a clear error; back but empty (restarted), the renewal writes the leases again.
    @Test func anOutageKeepsRoomsAndTheLeasesAreWrittenAgainAfter() throws {
        let cluster = try Cluster()
        let a = cluster.node("a")
        let b = cluster.node("b", pause: cluster.waiting(renewing: a))
        _ = try a.acquire("hall")
        cluster.bus.down = true
        cluster.clock.advance(by: .seconds(10))
        a.renewAll()
        #expect(a.held == 1 && cluster.lost.withLock { $0.isEmpty })
        let waiting = #expect(throws: ProtocolError.self) { try b.acquire("diwan") }
        #expect(waiting?.code == .internal && waiting?.message.contains("cannot be placed now") == true)
        cluster.bus.down = false
        cluster.bus.forget()
        a.renewAll()
        #expect(try cluster.bus.holder(of: "hall") == "a i-a")
        #expect(throws: ProtocolError.self) { try b.acquire("hall") }
    }

    /// Redis back after an outage, empty: a member asks another node for a living room the
    /// instant Redis answers. That node waits until the room's node has written its lease again
    /// (at its next renewal), and sends the member there: the room stays where it was.
    @Test func aRoomKeepsItsNodeWhenTheBusComesBackEmpty() throws {
        let cluster = try Cluster()
        let a = cluster.node("a")
        _ = try a.acquire("hall")
        cluster.bus.down = true
        cluster.clock.advance(by: .seconds(20))
        a.renewAll()
        cluster.bus.forget()
        cluster.bus.down = false
        let b = cluster.node("b", pause: cluster.waiting(renewing: a))
        let refused = #expect(throws: ProtocolError.self) { try b.acquire("hall", placing: true) }
        #expect(refused?.code == .conflict && refused?.host?.node == "a", "\(String(describing: refused))")
        #expect(a.held == 1 && b.held == 0 && cluster.lost.withLock { $0.isEmpty })
        // Once settled, rooms are taken at once again.
        _ = try b.acquire("diwan")
        #expect(b.held == 1)
    }

    /// A node that wakes past its lease asks the bus before answering for the room: a room
    /// another node took meanwhile is refused and lost at once; one nobody took (its fence
    /// still the newest) is kept; a lease renewed lately is not asked about.
    @Test func aNodeConfirmsALeaseThatMayHaveLapsedBeforeAnswering() throws {
        let cluster = try Cluster()
        let a = cluster.node("a")
        let b = cluster.node("b")
        _ = try a.acquire("hall")
        _ = try a.acquire("office")
        #expect(a.confirm("hall") == nil)
        // Paused past the lifetime; b takes the hall, nobody the office.
        cluster.clock.advance(by: .seconds(3))
        _ = try b.acquire("hall")
        let refused = a.confirm("hall")
        #expect(refused?.code == .conflict && refused?.host?.node == "b", "\(String(describing: refused))")
        #expect(cluster.lost.withLock { $0["a"] } == ["hall"])
        #expect(a.confirm("office") == nil && a.held == 1)
        // The hall taken, then let go, by b while a slept: its fence moved on, so a's lease
        // taken back is not enough.
        _ = try a.acquire("garden")
        cluster.clock.advance(by: .seconds(3))
        _ = try b.acquire("garden")
        b.release("garden")
        #expect(a.confirm("garden")?.code == .conflict)
        #expect(a.held == 1)
    }

    /// A node wakes after the node that took its room stalled past that lease too (the bus has
    /// no lease for the room): its renewal, which wrote its own lease again, finds its fence old
    /// and gives the lease back, so the room stays with the node that took it.
    @Test func aNodeThatWakesToALostRoomLeavesItsLeaseToTheRoomsNewNode() throws {
        let cluster = try Cluster()
        let a = cluster.node("a")
        let b = cluster.node("b")
        _ = try a.acquire("hall")
        _ = try a.acquire("garden")
        cluster.clock.advance(by: .seconds(3))
        _ = try b.acquire("hall")
        _ = try b.acquire("garden")
        // b stalls past both leases; a wakes: its renewal loses the hall, its check the garden.
        cluster.clock.advance(by: .seconds(3))
        a.renewAll()
        #expect(a.confirm("garden")?.code == .conflict)
        #expect(a.held == 0 && cluster.lost.withLock { $0["a"] }.map(Set.init) == ["hall", "garden"])
        #expect(try cluster.bus.holder(of: "hall") == nil && cluster.bus.holder(of: "garden") == nil)
        // b wakes and keeps both.
        b.renewAll()
        #expect(b.held == 2 && cluster.lost.withLock { $0["b"] } == nil)
        #expect(try cluster.bus.holder(of: "hall") == "b i-b" && cluster.bus.holder(of: "garden") == "b i-b")
    }

    /// A busy node sends a member's new room to an idle node that reports: the room is kept for
    /// it, every node asked meanwhile names it, and it opens there. An operator's call opens a
    /// room where it is made.
    @Test func aNewRoomIsPlacedOnTheLessLoadedNode() throws {
        let cluster = try Cluster()
        let busy = cluster.node("a", members: 40, rooms: 4)
        let idle = cluster.node("b")
        let sent = #expect(throws: ProtocolError.self) { try busy.acquire("new", placing: true) }
        #expect(sent?.host?.node == "b" && sent?.message.contains("opens on node b") == true, "\(String(describing: sent))")
        let third = cluster.node("c", members: 40, rooms: 4)
        let same = #expect(throws: ProtocolError.self) { try third.acquire("new", placing: true) }
        #expect(same?.host?.node == "b")
        _ = try idle.acquire("new", placing: true)
        #expect(idle.held == 1)
        _ = try busy.acquire("office")
        #expect(busy.held == 1)
    }

    /// A node that stopped reporting (it died) is not given rooms: two seconds after its last
    /// report, a room kept for it goes to the node asked.
    @Test func aSilentNodeIsPassedOverEvenWhenARoomIsKeptForIt() throws {
        let cluster = try Cluster()
        let busy = cluster.node("a", members: 40, rooms: 4)
        _ = cluster.node("b")
        let kept = #expect(throws: ProtocolError.self) { try busy.acquire("later", placing: true) }
        #expect(kept?.host?.node == "b")
        cluster.clock.advance(by: .seconds(2.1))
        cluster.bus.report("a")
        _ = try busy.acquire("later", placing: true)
        #expect(busy.held == 1)
    }

    /// A draining node keeps no room it is asked for, not even an operator's, while another
    /// node can take it; alone, it keeps it.
    @Test func aDrainingNodeSendsEveryRoomElsewhere() throws {
        let cluster = try Cluster()
        let draining = cluster.node("a", draining: true)
        _ = try draining.acquire("office")  // alone, it keeps the room
        _ = cluster.node("b")
        let elsewhere = #expect(throws: ProtocolError.self) { try draining.acquire("salon") }
        #expect(elsewhere?.host?.node == "b")
    }
}
