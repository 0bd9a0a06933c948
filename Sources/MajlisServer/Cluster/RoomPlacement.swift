/// Which node opens a room that is open nowhere: a pure choice over the nodes' last reported
/// load, with this node's own load as it is now.
///
/// The asking node weighs itself against one other active node drawn at random (the "two
/// choices" rule: a random draw spreads rooms without every node herding onto the one that
/// looked least loaded a second ago) and keeps the room unless that node carries less. A node
/// that drains takes no room: it weighs two other active nodes, and keeps the room only when
/// there is no other. Load is members plus rooms (a room held open costs something even while
/// few are in it).
///
/// Reports are up to a registry interval old, so rooms this node sent to a node lately are added
/// to that node's load (each with as many members as this node's rooms have on average) until
/// its next report could show them.
public struct RoomPlacement: Sendable {
    /// A node as placement weighs it.
    public struct Candidate: Sendable, Equatable {
        public var id: String
        public var members: Int
        public var rooms: Int
        public var load: Int { members + rooms }

        public init(id: String, members: Int, rooms: Int) {
            self.id = id
            self.members = members
            self.rooms = rooms
        }
    }

    /// How long (ms) a room sent to a node counts on top of its report.
    public let memory: Int64
    /// Rooms sent elsewhere lately: (node, when).
    public private(set) var sent: [(node: String, at: Int64)] = []

    public init(memory: Int64 = 2_000) {
        self.memory = memory
    }

    /// The node to open a room on, at `now`: `me` itself (`mayHost`: it is not draining) or one
    /// of `others` (the active nodes besides it).
    public mutating func choose(now: Int64, me: Candidate, mayHost: Bool, others: [Candidate], random: inout some RandomNumberGenerator) -> String {
        sent.removeAll { now - $0.at >= memory }
        // A room just sent is as full as this node's rooms are on average (members come after).
        let perRoom = me.rooms > 0 ? me.members / me.rooms : 0
        let others = others.filter { $0.id != me.id }.map { node in
            var node = node
            let count = sent.count { $0.node == node.id }
            node.rooms += count
            node.members += count * perRoom
            return node
        }
        guard !others.isEmpty else { return me.id }
        let drawn = others.randomElement(using: &random)!
        let choice: Candidate
        if mayHost {
            choice = drawn.load < me.load ? drawn : me
        } else {
            let second = others.count > 1 ? others.filter { $0.id != drawn.id }.randomElement(using: &random)! : drawn
            choice = second.load < drawn.load ? second : drawn
        }
        if choice.id != me.id { sent.append((choice.id, now)) }
        return choice.id
    }
}
