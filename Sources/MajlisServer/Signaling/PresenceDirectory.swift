import MajlisTransport
import Synchronization

/// Which sessions each user has now (one per device), and which rooms each user is a member of
/// through which device.
///
/// A user has at most one live session per device (the device a client names at `hello`; ""
/// for none): a newer `hello` on the same device replaces the older connection (4004), and the
/// rooms held through that device carry over to it. Sessions on different devices live side by
/// side: each gets the user's messages, and each room's events go to the device the user last
/// joined it from. When a connection drops, the user stays a member of its rooms (without a
/// session) until the rooms' resume grace runs out; a session of the same device that comes back
/// in time gets them again.
final class PresenceDirectory: Sendable {
    /// Sessions and rooms are kept apart, so that finding the connections of a room's members
    /// (every broadcast) copies a reference per member, not a set of rooms.
    private struct Directory {
        /// Each user's live sessions, by device.
        var sessions: [String: [String: Session]] = [:]
        /// Each user's rooms, and the device that takes each room's events.
        var rooms: [String: [String: String]] = [:]
        /// Changes whenever any user's session, or the device one of a user's rooms goes to,
        /// does: a list of connections looked up under one generation holds until the next.
        var generation: UInt64 = 0

        func session(of user: String, in room: String) -> Session? {
            guard let device = rooms[user]?[room] else { return nil }
            return sessions[user]?[device]
        }

        func rooms(of user: String, device: String) -> Set<String> {
            Set((rooms[user] ?? [:]).compactMap { $0.value == device ? $0.key : nil })
        }
    }

    private let directory = Mutex(Directory())

    /// Makes `session` the user's session on `device`; returns the one it replaces, the user's
    /// rooms held through that device, and whether the user had no session here before.
    func bind(_ user: String, device: String, to session: Session) -> (replaced: Session?, rooms: Set<String>, first: Bool) {
        directory.withLock { directory in
            let first = directory.sessions[user] == nil
            let previous = directory.sessions[user, default: [:]].updateValue(session, forKey: device)
            directory.generation &+= 1
            return (previous === session ? nil : previous, directory.rooms(of: user, device: device), first)
        }
    }

    /// The session ended; when it was the device's current session, returns the user's rooms
    /// held through its device and whether the user has no session here any more.
    func unbind(_ user: String, device: String, session: Session) -> (rooms: Set<String>, last: Bool)? {
        directory.withLock { directory in
            guard directory.sessions[user]?[device] === session else { return nil }
            directory.sessions[user]?[device] = nil
            let last = directory.sessions[user]?.isEmpty == true
            if last { directory.sessions[user] = nil }
            directory.generation &+= 1
            return (directory.rooms(of: user, device: device), last)
        }
    }

    /// The user joined `room` from `device`; returns the live session of the other device the
    /// room was held through until now (told it is elsewhere), if any.
    @discardableResult
    func joined(_ user: String, room: String, device: String) -> Session? {
        directory.withLock { directory in
            let before = directory.rooms[user, default: [:]].updateValue(device, forKey: room)
            guard let before, before != device else { return nil }
            directory.generation &+= 1
            return directory.sessions[user]?[before]
        }
    }

    /// The user is no longer in `room`; returns the session the room was held through and how
    /// many rooms that device still holds.
    @discardableResult
    func left(_ user: String, room: String) -> (session: Session?, remaining: Int) {
        directory.withLock { directory in
            let session = directory.session(of: user, in: room)
            let device = directory.rooms[user]?.removeValue(forKey: room)
            if directory.rooms[user]?.isEmpty == true { directory.rooms[user] = nil }
            let remaining = device.map { directory.rooms(of: user, device: $0).count } ?? 0
            return (session, remaining)
        }
    }

    /// The rooms the user holds through `device`.
    func rooms(of user: String, device: String) -> Set<String> {
        directory.withLock { $0.rooms(of: user, device: device) }
    }

    /// The live connections of these members of `room`, skipping those without one.
    func connections(of users: some Sequence<String>, in room: String) -> [WebSocketConnection] {
        connections(of: users, in: room, unlessStillAt: nil).connections ?? []
    }

    /// The live connections of these members of `room` and the generation they belong to; nil
    /// connections when the generation is still `known` (the caller's earlier list holds).
    func connections(
        of users: some Sequence<String>, in room: String, unlessStillAt known: UInt64?
    ) -> (connections: [WebSocketConnection]?, generation: UInt64) {
        directory.withLock { directory in
            if directory.generation == known { return (nil, directory.generation) }
            return (users.compactMap { directory.session(of: $0, in: room)?.connection }, directory.generation)
        }
    }

    /// Every live session of these users, on every device.
    func sessions(of users: some Sequence<String>) -> [Session] {
        directory.withLock { directory in users.flatMap { directory.sessions[$0].map { Array($0.values) } ?? [] } }
    }
}
