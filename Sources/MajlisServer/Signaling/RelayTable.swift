/// What one session relays to other nodes of the cluster (rooms this node does not host): the
/// token its links open with, a link per node, and which node each relayed room is on. Lives
/// behind `Session.relays`'s lock.
struct RelayTable: Sendable {
    /// The token of the session's `hello`, or of its latest `session.renew`: links open with it.
    var token: String?
    /// The node that relays this session here (`hello`'s `via`): its ops are not relayed again.
    var via: String?
    /// A link to each node that hosts a room of the session's, by node id.
    var links: [String: RelayLink] = [:]
    /// The node each relayed room is on, by room id: its ops go straight there.
    var rooms: [String: String] = [:]
    /// The session's connection is gone: no link is opened for it any more.
    var closed = false

    /// The link that carries `room`'s ops, if one does.
    func link(for room: String) -> RelayLink? {
        rooms[room].flatMap { links[$0] }
    }

    /// Forgets `link` (it closed) and the rooms it carried; whether it was this table's.
    mutating func remove(_ link: RelayLink) -> Bool {
        guard links[link.node] === link else { return false }
        links[link.node] = nil
        rooms = rooms.filter { $0.value != link.node }
        return true
    }
}
