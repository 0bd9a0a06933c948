import Foundation
import MajlisProtocol

/// Presence of contacts: a user's contacts hear `presence.changed` when the user's first device
/// comes online anywhere in the cluster and when the last one goes, and ask `presence.get` for
/// the state now. The store keeps which node has the user (`Store+Presence`); the work runs on
/// the messaging queue, in the order the sessions opened and closed.
extension MessagingRequests {
    /// How long (ms) the sessions on record of a node the cluster does not list are kept before
    /// the node is taken for gone. A node is in the registry before it serves (its first
    /// session), and every node reads the registry four times a second, so a live node missing
    /// from the list this long is gone; a dead one leaves the registry within 5 s, and its users
    /// are offline for their contacts 10 to 20 s after it died.
    static let unlistedNodeGrace: Int64 = 10_000

    /// The nodes whose sessions are kept: this one, and in a cluster every node the registry lists.
    private var liveNodes: Set<String> {
        var nodes: Set<String> = [context.config.node]
        if let registry = context.registry { nodes.formUnion(registry.lastKnown.map(\.id)) }
        return nodes
    }

    /// `user`'s first session on this node opened: their contacts hear they are online, unless
    /// they were already, on another node.
    func cameOnline(_ user: String) {
        queue.async { [self] in
            changePresence(of: user) { now in
                try context.store.cameOnline(user, node: context.config.node, now: now) ? UserPresence(user: user, online: true) : nil
            }
        }
    }

    /// `user`'s last session on this node closed: their contacts hear they are offline, unless
    /// they are online on another node.
    func wentOffline(_ user: String) {
        queue.async { [self] in
            changePresence(of: user) { now in
                try context.store.wentOffline(user, node: context.config.node, now: now)
                    ? UserPresence(user: user, online: false, lastSeen: now) : nil
            }
        }
    }

    /// Forgets the sessions of nodes that are gone (this node's own from before it started
    /// again, with `includingThisNode`): their users' contacts hear they are offline.
    func sweepPresence(includingThisNode: Bool = false) {
        queue.async { [self] in
            let now = context.now()
            do {
                // Without the registry (Redis unreachable) no other node is taken for gone.
                let registryAnswers = context.registry?.reachable ?? true
                var gone = registryAnswers ? try context.store.presenceNodes(missingFrom: liveNodes, before: now - Self.unlistedNodeGrace) : []
                if includingThisNode { gone.insert(context.config.node, at: 0) }
                for node in gone {
                    let users = try context.store.clearPresence(of: node, now: now)
                    if !users.isEmpty { context.logger.info("presence: \(users.count) users of node \(node) are offline") }
                    for user in users { deliver(try announcement(UserPresence(user: user, online: false, lastSeen: now), of: user)) }
                }
            } catch {
                context.logger.log(.warning, "presence could not be swept: \(error)", event: "presence.failed")
            }
        }
    }

    /// `presence.share`: who sees the caller's presence from now on; the caller's contacts hear
    /// the change (hidden, or the presence they may see again).
    func share(_ sharing: PresenceSharing?, caller: String, now: Int64) throws -> Outcome {
        let store = context.store
        guard let sharing, try store.setPresenceSharing(sharing, of: caller) else {
            return Outcome(data: WireEncoder.encode(["share": try store.presenceSharing(of: caller)]))
        }
        let contacts = try store.contacts(of: caller)
        var events: [Delivery] = []
        if let viewer = contacts.first, let presence = try store.presence(of: [caller], seenBy: viewer).first {
            events = [Delivery(users: contacts, event: .presenceChanged(presence))]
        }
        return Outcome(data: WireEncoder.encode(["share": sharing]), events: events)
    }

    /// `presence.changed` with `presence` for `user`'s contacts, when `user` shares it with them.
    private func announcement(_ presence: UserPresence, of user: String) throws -> [Delivery] {
        guard try context.store.presenceSharing(of: user) == .contacts else { return [] }
        let contacts = try context.store.contacts(of: user)
        return contacts.isEmpty ? [] : [Delivery(users: contacts, event: .presenceChanged(presence))]
    }

    /// Runs `change` (nil: nothing to tell) and tells `user`'s contacts; a store that fails
    /// leaves the presence as it was, logged.
    private func changePresence(of user: String, _ change: (Int64) throws -> UserPresence?) {
        do {
            guard let presence = try change(context.now()) else { return }
            deliver(try announcement(presence, of: user))
        } catch {
            context.logger.log(.warning, "presence of \(user) not recorded: \(error)", event: "presence.failed", fields: ["user": user])
        }
    }
}
