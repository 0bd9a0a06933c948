import MajlisProtocol
import MajlisServer
import Testing

/// Where a room open nowhere is opened, on a manual clock: the asking node keeps it unless the
/// other node drawn carries less, rooms just sent to a node count until its report can show
/// them, a draining node keeps none while another can take it, and rooms spread evenly.
struct RoomPlacementTests {
    typealias Node = RoomPlacement.Candidate

    @Test func aLoneNodeKeepsEveryRoomEvenWhileDraining() {
        var placement = RoomPlacement()
        var random = SplitMix64(seed: 1)
        let me = Node(id: "a", members: 900, rooms: 40)
        #expect(placement.choose(now: 0, me: me, mayHost: true, others: [], random: &random) == "a")
        #expect(placement.choose(now: 0, me: me, mayHost: false, others: [], random: &random) == "a")
        // Its own entry among the others is not another node.
        #expect(placement.choose(now: 0, me: me, mayHost: true, others: [me], random: &random) == "a")
    }

    @Test func theAskingNodeKeepsTheRoomUnlessTheOtherCarriesLess() {
        for seed in 0..<20 as Range<UInt64> {
            var random = SplitMix64(seed: seed)
            var placement = RoomPlacement()
            let quiet = Node(id: "b", members: 2, rooms: 1)
            #expect(placement.choose(now: 0, me: Node(id: "a", members: 5, rooms: 1), mayHost: true, others: [quiet], random: &random) == "b")
            #expect(placement.choose(now: 0, me: Node(id: "a", members: 1, rooms: 1), mayHost: true, others: [quiet], random: &random) == "a")
            // Equal load: no needless hop.
            #expect(placement.choose(now: 0, me: Node(id: "a", members: 2, rooms: 1), mayHost: true, others: [quiet], random: &random) == "a")
        }
    }

    @Test func roomsSentToANodeCountUntilItsReportCanShowThem() {
        var placement = RoomPlacement(memory: 2_000)
        var random = SplitMix64(seed: 7)
        let me = Node(id: "a", members: 3, rooms: 0)
        let idle = Node(id: "b", members: 0, rooms: 0)
        // b's report still says 0: each room sent there counts one more, up to a's load of 3.
        let first = (0..<5).map { _ in placement.choose(now: 100, me: me, mayHost: true, others: [idle], random: &random) }
        #expect(first == ["b", "b", "b", "a", "a"])
        // Later than `memory`, only the reports count again.
        #expect(placement.choose(now: 2_100, me: me, mayHost: true, others: [idle], random: &random) == "b")
        #expect(placement.sent.count == 1)

        // A room sent counts as full as the asking node's rooms are on average: 10 members here.
        var busy = RoomPlacement(memory: 2_000)
        let crowded = Node(id: "a", members: 40, rooms: 4)
        let sends = (0..<6).map { _ in busy.choose(now: 0, me: crowded, mayHost: true, others: [idle], random: &random) }
        #expect(sends == ["b", "b", "b", "b", "a", "a"])
    }

    @Test func aDrainingNodePlacesOnTheLessLoadedOfTwoOthers() {
        for seed in 0..<20 as Range<UInt64> {
            var random = SplitMix64(seed: seed)
            var placement = RoomPlacement()
            let me = Node(id: "a", members: 0, rooms: 0)
            let others = [Node(id: "b", members: 50, rooms: 5), Node(id: "c", members: 10, rooms: 2)]
            #expect(placement.choose(now: 0, me: me, mayHost: false, others: others, random: &random) == "c")
            #expect(placement.choose(now: 0, me: me, mayHost: false, others: [others[0]], random: &random) == "b")
        }
    }

    /// Three nodes, each room asked for at a random node with the loads as they are: none ends
    /// with more than 40% of 600 rooms, whatever the seed.
    @Test(arguments: [1, 2, 3] as [UInt64]) func roomsSpreadOverTheNodes(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let ids = ["a", "b", "c"]
        var placements = Dictionary(uniqueKeysWithValues: ids.map { ($0, RoomPlacement()) })
        var rooms = Dictionary(uniqueKeysWithValues: ids.map { ($0, 0) })
        for step in 0..<600 {
            // Every client starts at node a for a third of the rooms, then anywhere.
            let asked = step < 200 ? "a" : ids.randomElement(using: &random)!
            let nodes = ids.map { Node(id: $0, members: 4 * rooms[$0]!, rooms: rooms[$0]!) }
            let me = nodes.first { $0.id == asked }!
            let chosen = placements[asked]!.choose(now: Int64(step) * 10, me: me, mayHost: true, others: nodes, random: &random)
            rooms[chosen]! += 1
        }
        #expect(rooms.values.allSatisfy { $0 <= 240 }, "\(rooms)")
        #expect(rooms.values.allSatisfy { $0 >= 160 }, "\(rooms)")
    }
}
