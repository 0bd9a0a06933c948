import MajlisTransport
import Synchronization

/// Which session each user has now, and which rooms each user is a member of.
///
/// A user has at most one live session: a newer `hello` replaces the older connection (4004),
/// and the user's rooms carry over to it. When a connection drops, the user stays a member of
/// its rooms (without a session) until the rooms' resume grace runs out.
final class PresenceDirectory: Sendable {
    private struct Entry {
        var session: Session?
        var rooms: Set<String> = []
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// Makes `session` the user's session; returns the one it replaces and the user's rooms.
    func bind(_ user: String, to session: Session) -> (replaced: Session?, rooms: Set<String>) {
        entries.withLock { entries in
            var entry = entries[user] ?? Entry()
            let previous = entry.session
            entry.session = session
            entries[user] = entry
            return (previous === session ? nil : previous, entry.rooms)
        }
    }

    /// The session ended; returns the user's rooms when it was the user's current session.
    func unbind(_ user: String, session: Session) -> Set<String>? {
        entries.withLock { entries in
            guard var entry = entries[user], entry.session === session else { return nil }
            entry.session = nil
            if entry.rooms.isEmpty { entries[user] = nil } else { entries[user] = entry }
            return entry.rooms
        }
    }

    func joined(_ user: String, room: String) {
        entries.withLock { entries in _ = entries[user, default: Entry()].rooms.insert(room) }
    }

    /// The user is no longer in `room`; returns its session and how many rooms it is still in.
    @discardableResult
    func left(_ user: String, room: String) -> (session: Session?, remaining: Int) {
        entries.withLock { entries in
            guard var entry = entries[user] else { return (nil, 0) }
            entry.rooms.remove(room)
            if entry.rooms.isEmpty && entry.session == nil { entries[user] = nil } else { entries[user] = entry }
            return (entry.session, entry.rooms.count)
        }
    }

    func rooms(of user: String) -> Set<String> {
        entries.withLock { $0[user]?.rooms ?? [] }
    }

    /// The live connections of these users, skipping those without one.
    func connections(of users: some Sequence<String>) -> [WebSocketConnection] {
        entries.withLock { entries in users.compactMap { entries[$0]?.session?.connection } }
    }

}
