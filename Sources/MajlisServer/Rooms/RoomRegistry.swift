import MajlisProtocol
import MajlisRoom
import Synchronization

/// The rooms this server hosts, loaded from the store on first use.
final class RoomRegistry: Sendable {
    private let hosts = Mutex<[String: RoomHost]>([:])
    /// The rooms the sweeper visits: those with a timer set or nobody in them (to unload).
    /// A busy room with nothing pending costs the sweeper nothing.
    private let swept = Mutex<[String: RoomHost]>([:])

    /// The room `id`, loading it from the store if it is there; nil when there is no such room.
    func host(_ id: String, context: ServerContext) throws -> RoomHost? {
        try hosts.withLock { hosts in
            if let host = hosts[id] { return host }
            guard let loaded = try context.store.loadRoom(id, now: context.now(), recentChats: context.config.roomLimits.rememberedClientMessages) else {
                return nil
            }
            let engine = RoomEngine(
                stored: loaded.stored, bans: loaded.bans, lastMsgId: loaded.lastMsgId, recentChats: loaded.recentChats,
                limits: context.config.roomLimits)
            let host = RoomHost(engine: engine, context: context)
            hosts[id] = host
            return host
        }
    }

    /// Creates and stores a new room owned by `owner`; `room_exists` if the id is taken,
    /// `forbidden` if `owner` already owns `ownedLimit` rooms (nil: no limit).
    func create(_ id: String, settings: RoomSettings, owner: String, ownedLimit: Int?, context: ServerContext) throws -> RoomHost {
        try hosts.withLock { hosts in
            if try hosts[id] != nil || context.store.roomExists(id) {
                throw ProtocolError(.roomExists, "room \(id) exists")
            }
            if let ownedLimit, try context.store.roomCount(ownedBy: owner) >= ownedLimit {
                throw ProtocolError(.forbidden, "you already own \(ownedLimit) rooms, the most one user may; end one first")
            }
            let engine = RoomEngine(id: id, settings: settings, owner: owner, now: context.now(), limits: context.config.roomLimits)
            if context.webhooks != nil {
                let started = WebhookEvent(type: "room.started", room: id, time: engine.createdAt, data: ["room": RoomWebhooks.json(engine.info)])
                try context.store.createRoom(engine.stored, events: [started], endpoints: context.webhookEndpoints)
                context.webhooks?.poke()
            } else {
                try context.store.saveRoom(engine.stored)
            }
            let host = RoomHost(engine: engine, context: context)
            hosts[id] = host
            return host
        }
    }

    /// Forgets `host` (ended, or unloaded while idle: the next use loads it from the store).
    func remove(_ id: String, host: RoomHost) {
        hosts.withLock { hosts in
            if hosts[id] === host { hosts[id] = nil }
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

    var all: [RoomHost] { hosts.withLock { Array($0.values) } }
    /// The rooms the sweeper visits now.
    var needingSweep: [RoomHost] { swept.withLock { Array($0.values) } }
    var count: Int { hosts.withLock { $0.count } }
}
