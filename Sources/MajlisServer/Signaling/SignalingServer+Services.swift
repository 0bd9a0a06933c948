import MajlisProtocol

extension SignalingServer {
    /// The services, in the order they start (see `ServiceGroup`).
    func makeServices() -> ServiceGroup {
        let context = context
        let media = context.media
        let messaging = messagingRequests
        let sweeper = Sweeper(
            context: context, sessions: { [weak self] in self?.sessions.all ?? [] }, monotonic: monotonic, sweepPresence: { messaging.sweepPresence() })
        var services: [ServiceGroup.Service] = []
        if let registry = context.registry, let leases = context.leases {
            services.append(.init("registry", start: {
                try registry.join { context.node.report(context) }
                registry.start(drainAsked: { context.drain() })
            }, stop: { registry.stop() }))
            services.append(.init("leases", start: {
                leases.start(here: { context.node.placement(context) }) { room in context.rooms.relinquish(room) }
            }, stop: { leases.stop() }))
        }
        if let bus = context.messagingBus { services.append(.init("messaging bus", start: { bus.start() }, stop: { bus.stop() })) }
        // The packs the store keeps, before any room op names one (read again by the sweeper).
        services.append(.init("packs", start: {
            do { try context.packIndex.reload(from: context.store) } catch { context.logger.warning("packs could not be read: \(error)") }
        }, stop: {}))
        services.append(.init("media", start: { media.start() }, stop: { media.stop() }))
        if let webhooks = context.webhooks { services.append(.init("webhooks", start: { webhooks.start() }, stop: { webhooks.stop() })) }
        // Sessions this node had when it stopped without saying so are over.
        services.append(.init("presence", start: { messaging.sweepPresence(includingThisNode: true) }, stop: { messaging.finish() }))
        services.append(.init("sweeper", start: { sweeper.start() }, stop: { sweeper.stop() }))
        return ServiceGroup(services)
    }
}
