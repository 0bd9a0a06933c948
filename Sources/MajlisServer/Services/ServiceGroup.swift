import Synchronization

/// The parts of the server that run beside the signaling loop (the cluster's registry and
/// leases, the media router, the webhook dispatcher, the sweeper), started in order and stopped
/// in the reverse order, each once: a start that fails stops those already started, so a server
/// that could not start leaves nothing running.
public final class ServiceGroup: Sendable {
    /// One part: how it starts and how it stops.
    public struct Service: Sendable {
        public var name: String
        public var start: @Sendable () throws -> Void
        public var stop: @Sendable () -> Void

        public init(_ name: String, start: @escaping @Sendable () throws -> Void, stop: @escaping @Sendable () -> Void) {
            self.name = name
            self.start = start
            self.stop = stop
        }
    }

    private let services: [Service]
    /// How many of `services` have started (and not stopped since).
    private let running = Mutex(0)

    public init(_ services: [Service]) {
        self.services = services
    }

    /// Starts every service in order; when one fails, the ones before it are stopped, in reverse,
    /// and its error thrown. Does nothing when already started.
    public func start() throws {
        try running.withLock { running in
            guard running == 0 else { return }
            for service in services {
                do {
                    try service.start()
                    running += 1
                } catch {
                    for started in services.prefix(running).reversed() { started.stop() }
                    running = 0
                    throw error
                }
            }
        }
    }

    /// Stops what started, in the reverse order (a second call does nothing).
    public func stop() {
        running.withLock { running in
            for service in services.prefix(running).reversed() { service.stop() }
            running = 0
        }
    }

    /// Stops the one service `name` now, ahead of the others (its own stop must bear a second call).
    public func stop(_ name: String) {
        running.withLock { running in
            services.prefix(running).first { $0.name == name }?.stop()
        }
    }
}
