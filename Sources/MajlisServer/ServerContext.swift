import Foundation
import MajlisProtocol

/// What every part of the server shares: configuration, store, presence, rooms, media, the web
/// app, log and clock.
final class ServerContext: Sendable {
    let config: ServerConfig
    let store: Store
    let presence = PresenceDirectory()
    let logger: Logger
    /// Wall-clock Unix milliseconds.
    let clock: @Sendable () -> Int64
    let rooms: RoomRegistry
    let media: MediaRouter
    let web: WebApp
    let metrics = ServerMetrics()

    init(config: ServerConfig, store: Store, media: MediaRouter, logger: Logger, clock: @escaping @Sendable () -> Int64) {
        self.config = config
        self.store = store
        self.media = media
        web = WebApp(config: config)
        self.logger = logger
        self.clock = clock
        self.rooms = RoomRegistry()
    }

    /// Unix milliseconds now.
    func now() -> Int64 { clock() }

    static let systemClock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
