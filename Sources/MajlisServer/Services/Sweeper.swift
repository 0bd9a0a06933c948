import Dispatch
import MajlisProtocol
import Synchronization

/// The server's periodic work, four times a second on a queue of its own: each session's timers
/// (`SessionState.due`: hello and heartbeat timeouts, token expiry), room timers, a draining
/// node's rooms still to hand over, speaker levels and network quality to the rooms, idle rooms
/// out of memory, the store's retention (replaced resource packs too) and its check, memory handed back, and (every five
/// seconds) the sessions of nodes that are gone forgotten.
final class Sweeper: @unchecked Sendable {
    // Audited: `timer` is set by `start` and cancelled by `stop`, both called once each by the
    // server's `ServiceGroup`; `sweeps`, `roomsWithLevels` and `checking` are touched on `queue` only.
    private let context: ServerContext
    /// The open sessions now.
    private let sessions: @Sendable () -> [Session]
    /// Monotonic milliseconds (what connections' `lastReceived` is in).
    private let monotonic: any MillisecondClock
    /// Forgets the sessions of nodes that are gone (presence of contacts).
    private let sweepPresence: @Sendable () -> Void
    private let queue = DispatchQueue(label: "majlis.sweeper")
    /// The store's check, apart: a database that does not answer holds up only the check.
    private let checks = DispatchQueue(label: "majlis.sweeper.store")
    /// Whether a check is under way (set and cleared on `queue`).
    private var checking = false
    private var timer: DispatchSourceTimer?
    private var sweeps = 0
    /// Rooms that had speakers at the last sweep.
    private var roomsWithLevels: Set<String> = []

    init(
        context: ServerContext, sessions: @escaping @Sendable () -> [Session], monotonic: any MillisecondClock,
        sweepPresence: @escaping @Sendable () -> Void = {}
    ) {
        self.context = context
        self.sessions = sessions
        self.monotonic = monotonic
        self.sweepPresence = sweepPresence
    }

    func start() {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(250), repeating: .milliseconds(250))
        timer.setEventHandler { [weak self] in self?.sweep() }
        timer.resume()
        self.timer = timer
    }

    /// Stops sweeping; a sweep under way finishes first (so nothing it uses stops under it).
    func stop() {
        timer?.cancel()
        queue.sync {}
        checks.sync {}
    }

    private func sweep() {
        let now = context.now()
        let monotonic = self.monotonic.now()
        let config = context.config
        for session in sessions() {
            let connection = session.connection
            switch session.state.withLock({ $0.due(now: now, monotonic: monotonic, lastReceived: connection.lastReceived) }) {
            case .nothing: break
            case .ping: connection.ping()
            case .close(let code, let reason): connection.close(code: code, reason: reason)
            case .warnExpiry(let expiresAt):
                connection.send(WireEncoder.event(EventFrame(room: nil, seq: nil, event: .tokenExpiring(expiresAt: expiresAt))))
            }
        }
        let swept = context.rooms.needingSweep
        for host in swept { host.tickIfDue(now: now) }
        // A draining node hands over rooms it still has, once another node can take them.
        if context.node.draining, !context.rooms.all.isEmpty { context.handOverRooms(force: false) }
        // Speaker levels, at most four times a second; one empty report when a room falls silent.
        let levels = context.media.takeLevels()
        for room in Set(levels.keys).union(roomsWithLevels) {
            (try? context.rooms.host(room, context: context))?.broadcast(.speakerLevels(levels[room] ?? []))
        }
        roomsWithLevels = Set(levels.keys)
        // Network quality (every two seconds from the router), for members who sent or reported anything.
        for (room, qualities) in context.media.takeQuality() {
            (try? context.rooms.host(room, context: context))?.reportQuality(qualities)
        }
        sweeps += 1
        if sweeps % 16 == 8 {
            for host in swept { host.unloadIfIdle(now: now, idleMilliseconds: Duration.seconds(config.idleRoomSeconds).milliseconds) }
        }
        // The store, every five seconds, so /healthz says at once when it fails (a lost file, a
        // read-only disk, PostgreSQL gone) even while nothing is written.
        if sweeps % 20 == 4, !checking {
            checking = true
            checks.async { [context, queue] in
                context.store.check()
                queue.async { [weak self] in self?.checking = false }
            }
        }
        if sweeps % 240 == 0 {
            try? context.store.pruneReplies(before: now - Duration.seconds(config.ridLifetime).milliseconds)
            _ = try? context.store.prunePacks(replacedBefore: now - Int64(Store.packKeepDays) * 86_400_000)
            do {
                let pruned = try context.store.pruneChat(before: now - Int64(config.historyDays) * 86_400_000, keep: config.historyMessages)
                if pruned > 0 { context.logger.info("chat history: \(pruned) messages past retention deleted") }
            } catch {
                context.logger.error("chat history retention failed: \(error)")
            }
            do {
                let expired = try context.store.expireUploads(now: now)
                if expired > 0 { context.logger.info("uploads: \(expired) unfinished past their expiry deleted") }
            } catch {
                context.logger.error("upload expiry failed: \(error)")
            }
        }
        if sweeps % 8 == 0 { MemoryTrimmer.trim() }
        if sweeps % 20 == 14 { sweepPresence() }
        // The packs the store keeps (taken on another node, or pruned), on the checks' queue.
        if sweeps % 20 == 9 {
            checks.async { [context] in
                do { try context.packIndex.reload(from: context.store) } catch { context.logger.warning("packs could not be read: \(error)") }
            }
        }
    }
}
