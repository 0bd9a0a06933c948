import MajlisTransport
import Synchronization

/// Which session each user has now, and which rooms each user is a member of.
///
/// A user has at most one live session: a newer `hello` replaces the older connection (4004),
/// and the user's rooms carry over to it. When a connection drops, the user stays a member of
/// its rooms (without a session) until the rooms' resume grace runs out.
final class PresenceDirectory: Sendable {
    /// Sessions and rooms are kept apart, so that finding the connections of a room's members
    /// (every broadcast) copies a reference per member, not a set of rooms.
    private struct Directory {
        var sessions: [String: Session] = [:]
        var rooms: [String: Set<String>] = [:]
        /// Changes whenever any user's session does: a list of connections looked up under one
        /// generation holds until the next.
        var generation: UInt64 = 0
    }

    private let directory = Mutex(Directory())

    /// Makes `session` the user's session; returns the one it replaces and the user's rooms.
    func bind(_ user: String, to session: Session) -> (replaced: Session?, rooms: Set<String>) {
        directory.withLock { directory in
            let previous = directory.sessions.updateValue(session, forKey: user)
            directory.generation &+= 1
            return (previous === session ? nil : previous, directory.rooms[user] ?? [])
        }
    }

    /// The session ended; returns the user's rooms when it was the user's current session.
    func unbind(_ user: String, session: Session) -> Set<String>? {
        directory.withLock { directory in
            guard directory.sessions[user] === session else { return nil }
            directory.sessions[user] = nil
            directory.generation &+= 1
            return directory.rooms[user] ?? []
        }
    }

    func joined(_ user: String, room: String) {
        directory.withLock { _ = $0.rooms[user, default: []].insert(room) }
    }

    /// The user is no longer in `room`; returns its session and how many rooms it is still in.
    @discardableResult
    func left(_ user: String, room: String) -> (session: Session?, remaining: Int) {
        directory.withLock { directory in
            directory.rooms[user]?.remove(room)
            let remaining = directory.rooms[user]?.count ?? 0
            if remaining == 0 { directory.rooms[user] = nil }
            return (directory.sessions[user], remaining)
        }
    }

    func rooms(of user: String) -> Set<String> {
        directory.withLock { $0.rooms[user] ?? [] }
    }

    /// The live connections of these users, skipping those without one.
    func connections(of users: some Sequence<String>) -> [WebSocketConnection] {
        connections(of: users, unlessStillAt: nil).connections ?? []
    }

    /// The live connections of these users and the generation they belong to; nil connections
    /// when the generation is still `known` (the caller's earlier list holds).
    func connections(of users: some Sequence<String>, unlessStillAt known: UInt64?) -> (connections: [WebSocketConnection]?, generation: UInt64) {
        directory.withLock { directory in
            if directory.generation == known { return (nil, directory.generation) }
            return (users.compactMap { directory.sessions[$0]?.connection }, directory.generation)
        }
    }
}
