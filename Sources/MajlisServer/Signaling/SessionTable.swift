import Foundation
import Synchronization

/// The open sessions by connection, and how many each address holds (`maxConnectionsPerAddress`).
/// `stop` waits on it for the last session to close.
final class SessionTable: Sendable {
    private let sessions = Mutex<[UInt64: Session]>([:])
    /// Open connections by the address they count against.
    private let perAddress = Mutex<[String: Int]>([:])
    /// Signalled when the last session closes.
    private let drained = NSCondition()

    /// Adds a session; how many connections its address holds now.
    func open(_ session: Session) -> Int {
        sessions.withLock { $0[session.connection.id] = session }
        return perAddress.withLock { counts in
            counts[session.connection.peer, default: 0] += 1
            return counts[session.connection.peer] ?? 0
        }
    }

    /// Removes the session of a closed connection (nil when it was not here), giving its address's count back.
    func close(_ connection: UInt64) -> Session? {
        guard let (session, empty) = sessions.withLock({ open in open.removeValue(forKey: connection).map { ($0, open.isEmpty) } }) else { return nil }
        if empty {
            drained.lock()
            drained.broadcast()
            drained.unlock()
        }
        session.address.withLock { address in perAddress.withLock { Self.giveBack(address, &$0) } }
        return session
    }

    /// The open session of a connection.
    func session(_ connection: UInt64) -> Session? { sessions.withLock { $0[connection] } }

    /// Whether `session` is still open (not closed meanwhile).
    func isOpen(_ session: Session) -> Bool { self.session(session.connection.id) === session }

    var all: [Session] { sessions.withLock { Array($0.values) } }
    var count: Int { sessions.withLock { $0.count } }

    /// Whether the session's address holds at most `most` connections, once the session counts
    /// against `client` (a relayed session's client, as its node states it) instead of its
    /// connection's peer. A session closed meanwhile passes (its count is given back where it was).
    func admit(_ session: Session, countingAgainst client: String?, most: Int) -> Bool {
        session.address.withLock { address in
            guard isOpen(session) else { return true }
            return perAddress.withLock { counts in
                if let client, client != address {
                    Self.giveBack(address, &counts)
                    address = client
                    counts[client, default: 0] += 1
                }
                return counts[address, default: 0] <= most
            }
        }
    }

    /// Waits until no session is open, or `deadline`.
    func waitUntilEmpty(before deadline: Date) {
        drained.lock()
        while sessions.withLock({ !$0.isEmpty }), drained.wait(until: deadline) {}
        drained.unlock()
    }

    private static func giveBack(_ address: String, _ counts: inout [String: Int]) {
        counts[address, default: 1] -= 1
        if counts[address] ?? 0 <= 0 { counts[address] = nil }
    }
}
