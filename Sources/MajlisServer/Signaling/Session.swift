import Foundation
import MajlisProtocol
import MajlisRoom
import MajlisTransport
import Synchronization

/// One connection's session: its connection, its `SessionState` (who it is, its limits, its
/// timers) and the queue its large frames are read on.
///
/// Thread-safe: the state lives behind `state`'s lock.
final class Session: Sendable {
    let connection: WebSocketConnection
    let state: Mutex<SessionState>
    /// Where this connection's frames are read when they are not on the service thread: one at
    /// a time, in order.
    let frames: DispatchQueue
    /// Frames handed to `frames` and not yet done.
    let queuedFrames = Atomic<Int>(0)
    /// Its ops on rooms other nodes host, and the links that carry them there.
    let relays = Mutex(RelayTable())
    /// The address the session counts against (`maxConnectionsPerAddress`): its connection's
    /// peer, or for a session another node of the cluster relays, the client's address as that
    /// node states it (`RelayStatement`).
    let address: Mutex<String>

    init(connection: WebSocketConnection, now: Int64, limits: SessionState.Limits, frames target: DispatchQueue) {
        self.connection = connection
        address = Mutex(connection.peer)
        frames = DispatchQueue(label: "majlis.session", target: target)
        state = Mutex(SessionState(openedAt: now, limits: limits))
    }

    var claims: AccessClaims? { state.withLock { $0.claims } }
    var userId: String? { state.withLock { $0.claims?.sub } }
    var sessionId: String? { state.withLock { $0.id } }
    /// The device the client named at `hello` ("" for none).
    var device: String { state.withLock { $0.device } }
    /// Wall-clock ms when it said `hello`.
    var greetedAt: Int64? { state.withLock { $0.greetedAt } }
    /// The caller the room engine sees.
    var caller: Caller? { state.withLock { $0.caller } }

    /// Queues an answer; `since` is when its request arrived (monotonic ns), for the write-delay figures.
    func send(_ data: Data, urgent: Bool = true, since: UInt64? = nil) { connection.send(data, urgent: urgent, since: since) }
}
