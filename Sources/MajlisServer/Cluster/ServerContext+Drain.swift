import MajlisProtocol

extension ServerContext {
    /// Drains this node of a cluster (`majlis admin drain`, or a stop): it is marked draining at
    /// once in the registry, so no node places a room here, and each of its rooms is handed over
    /// (`handOverRooms`). It goes on answering: a member that asks it for a room is sent to the
    /// room's node. Does nothing on a server without a cluster, or one already draining.
    func drain() {
        guard let registry, node.startDraining() else { return }
        logger.log(.info, "node \(node.id) drains: its \(rooms.count) rooms go to other nodes", event: "node.draining", fields: ["node": node.id])
        registry.publish()
        handOverRooms(force: false)
    }

    /// Hands every room of a draining node over: its lease given back, its members told to
    /// connect again (1001), so they open it on another node, seats kept (see
    /// `RoomHost.relinquish`). Unless `force` (the node stops), only while another active node
    /// can take the rooms: a lone node keeps serving them. Returns once every room has let go.
    func handOverRooms(force: Bool) {
        guard let registry, node.draining else { return }
        if !force, !registry.lastKnown.contains(where: { $0.id != node.id && $0.state == .active }) { return }
        let hosts = rooms.all
        for host in hosts { host.relinquish(handOver: true) }
        for host in hosts { host.drain() }
    }
}
