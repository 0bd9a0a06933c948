import Dispatch
import MajlisProtocol
import MajlisRoom
import Synchronization

/// The rooms this server hosts, loaded from the store on first use.
///
/// The store is never touched on the caller's thread: a room not in memory is loaded (or
/// created) on the registry's own loader queue, and requests for it made meanwhile wait in line
/// behind the first, so each reaches the room in the order it was made. A room in memory is
/// handed out at once. (The service thread asks through `withHost`; other threads may wait with
/// `host` and `create`.)
final class RoomRegistry: Sendable {
    /// How a request may create the room it names when the room does not exist.
    struct Creation: Sendable, Equatable {
        var settings: RoomSettings
        var owner: String
        /// Rooms `owner` may own at most (nil: no limit).
        var ownedLimit: Int?
        /// `room.create`: the room must be new (else `room_exists`). Otherwise (`room.join` with
        /// `create`) an existing room is simply joined.
        var mustBeNew: Bool
        /// Whether the caller's token grants `create` (else `forbidden` when it would be needed).
        var allowed: Bool
    }

    typealias Body = @Sendable (Result<RoomHost, ProtocolError>) -> Void

    private struct Waiter {
        var creation: Creation?
        /// A member asks (`room.join`, `room.create`): a room open nowhere may be placed on
        /// another node (`RoomLeases`).
        var placing: Bool
        var body: Body
    }

    private enum Entry {
        case ready(RoomHost)
        /// Being loaded; these wait, in order.
        case loading([Waiter])
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let loader = DispatchQueue(label: "majlis.rooms.loader")
    /// The rooms the sweeper visits: those with a timer set or nobody in them (to unload).
    /// A busy room with nothing pending costs the sweeper nothing.
    private let swept = Mutex<[String: RoomHost]>([:])

    /// Hands `body` the room `id`: at once (on this thread) when it is in memory, else from the
    /// loader queue once it is loaded or, as `creation` allows, created; `room_not_found` when
    /// there is none. In a cluster, with `placing`, a room open nowhere may be placed on another
    /// node (`conflict` naming it).
    func withHost(_ id: String, creation: Creation? = nil, placing: Bool = false, context: ServerContext, _ body: @escaping Body) {
        enum Next { case ready(RoomHost), queued, start }
        let next: Next = entries.withLock { entries in
            switch entries[id] {
            case .ready(let host)?:
                return .ready(host)
            case .loading(var waiters)?:
                waiters.append(Waiter(creation: creation, placing: placing, body: body))
                entries[id] = .loading(waiters)
                return .queued
            case nil:
                entries[id] = .loading([Waiter(creation: creation, placing: placing, body: body)])
                return .start
            }
        }
        switch next {
        case .ready(let host):
            if let creation, creation.mustBeNew {
                body(.failure(ProtocolError(.roomExists, "room \(id) exists")))
            } else {
                body(.success(host))
            }
        case .queued:
            break
        case .start:
            loader.async { [self] in settle(id, context: context) }
        }
    }

    /// The room `id`, loading it if need be (waits for the loader; not for the service thread);
    /// nil when there is no such room.
    func host(_ id: String, context: ServerContext) throws -> RoomHost? {
        if case .ready(let host)? = entries.withLock({ $0[id] }) { return host }
        switch wait({ self.withHost(id, context: context, $0) }) {
        case .success(let host): return host
        case .failure(let error) where error.code == .roomNotFound: return nil
        case .failure(let error): throw error
        }
    }

    /// Creates and stores a new room owned by `owner` (waits for the loader; not for the service
    /// thread); `room_exists` if the id is taken, `forbidden` if `owner` already owns
    /// `ownedLimit` rooms (nil: no limit).
    func create(_ id: String, settings: RoomSettings, owner: String, ownedLimit: Int?, context: ServerContext) throws -> RoomHost {
        let creation = Creation(settings: settings, owner: owner, ownedLimit: ownedLimit, mustBeNew: true, allowed: true)
        return try wait({ self.withHost(id, creation: creation, context: context, $0) }).get()
    }

    private func wait(_ start: (@escaping Body) -> Void) -> Result<RoomHost, ProtocolError> {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<RoomHost, ProtocolError>?>(nil)
        start { answer in
            result.withLock { $0 = answer }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? .failure(ProtocolError(.internal, "no answer"))
    }

    // MARK: Loader queue

    /// Answers everyone waiting for `id`, in order, then publishes the room (or forgets it).
    private func settle(_ id: String, context: ServerContext) {
        var host: RoomHost?
        var loaded = false
        var fence: Int64?
        while true {
            // The next waiter; when none is left, the room becomes ready (atomically, so no
            // request slips in between the last waiter and the publication).
            let waiter: Waiter? = entries.withLock { entries in
                guard case .loading(var waiters)? = entries[id], !waiters.isEmpty else {
                    entries[id] = host.map { .ready($0) }
                    return nil
                }
                let first = waiters.removeFirst()
                entries[id] = .loading(waiters)
                return first
            }
            guard let waiter else {
                // A room that turned out not to exist is not held.
                if host == nil, fence != nil { context.leases?.release(id) }
                return
            }
            do throws(ProtocolError) {
                if !loaded {
                    // In a cluster, the room is this node's alone before anything of it is read.
                    if fence == nil { fence = try context.leases?.acquire(id, placing: waiter.placing) }
                    host = try load(id, fence: fence, context: context)
                    loaded = true
                }
                if let existing = host {
                    if let creation = waiter.creation, creation.mustBeNew { throw ProtocolError(.roomExists, "room \(id) exists") }
                    waiter.body(.success(existing))
                    continue
                }
                guard let creation = waiter.creation else { throw ProtocolError(.roomNotFound, "no room \(id)") }
                guard creation.allowed else { throw ProtocolError(.forbidden, "your token does not grant create") }
                let created = try make(id, creation, fence: fence, context: context)
                host = created
                waiter.body(.success(created))
            } catch {
                waiter.body(.failure(error))
            }
        }
    }

    private func load(_ id: String, fence: Int64?, context: ServerContext) throws(ProtocolError) -> RoomHost? {
        do {
            guard let loaded = try context.store.loadRoom(id, now: context.now(), recentChats: context.config.roomLimits.rememberedClientMessages) else {
                return nil
            }
            let engine = RoomEngine(
                stored: loaded.stored, bans: loaded.bans, lastMsgId: loaded.lastMsgId, recentChats: loaded.recentChats,
                attributes: loaded.attributes, limits: context.config.roomLimits, restoredAt: context.now())
            return RoomHost(engine: engine, fence: fence, context: context)
        } catch {
            context.logger.log(.error, "room \(id): store failed: \(error)", event: "store.error", fields: ["room": id, "error": "\(error)"])
            throw ProtocolError(.internal, "the server could not load room \(id)")
        }
    }

    private func make(_ id: String, _ creation: Creation, fence: Int64?, context: ServerContext) throws(ProtocolError) -> RoomHost {
        do {
            if let limit = creation.ownedLimit, try context.store.roomCount(ownedBy: creation.owner) >= limit {
                throw ProtocolError(.forbidden, "you already own \(limit) rooms, the most one user may; end one first")
            }
            let engine = RoomEngine(id: id, settings: creation.settings, owner: creation.owner, now: context.now(), limits: context.config.roomLimits)
            var events: [WebhookEvent] = []
            if context.webhooks != nil {
                events = [WebhookEvent(type: "room.started", room: id, time: engine.createdAt, data: ["room": RoomWebhooks.json(engine.info)])]
            }
            try context.store.createRoom(engine.stored, events: events, endpoints: context.webhookEndpoints, fence: fence)
            context.webhooks?.poke()
            return RoomHost(engine: engine, fence: fence, context: context)
        } catch let error as ProtocolError {
            throw error
        } catch {
            context.logger.log(.error, "room \(id): store failed: \(error)", event: "store.error", fields: ["room": id, "error": "\(error)"])
            throw ProtocolError(.internal, "the server could not create room \(id)")
        }
    }

    // MARK: Any thread

    /// Stops serving room `id` here: its lease is lost to another node (see `RoomLeases`).
    func relinquish(_ id: String) {
        guard case .ready(let host)? = entries.withLock({ $0[id] }) else { return }
        host.relinquish()
    }

    /// Forgets `host` (ended, or unloaded while idle: the next use loads it from the store).
    func remove(_ id: String, host: RoomHost) {
        entries.withLock { entries in
            if case .ready(let current)? = entries[id], current === host { entries[id] = nil }
        }
        sweep(id, host: host, needed: false)
    }

    /// Puts a room in (or takes it out of) the sweeper's set.
    func sweep(_ id: String, host: RoomHost, needed: Bool) {
        swept.withLock { swept in
            if needed {
                swept[id] = host
            } else if swept[id] === host {
                swept[id] = nil
            }
        }
    }

    /// The rooms in memory.
    var all: [RoomHost] {
        entries.withLock { entries in
            entries.values.compactMap { entry in
                if case .ready(let host) = entry { return host }
                return nil
            }
        }
    }

    /// The rooms the sweeper visits now.
    var needingSweep: [RoomHost] { swept.withLock { Array($0.values) } }
    var count: Int { all.count }
}
