import Foundation
import MajlisProtocol
import MajlisRoom
import MajlisTransport
import Synchronization

/// One connection's session: who it is once `hello` succeeded, and its limits.
///
/// Thread-safe: mutable state lives behind `state`'s lock.
final class Session: Sendable {
    struct State {
        var id: String?
        var claims: AccessClaims?
        var openedAt: Int64
        var expiryWarned = false
        var tokens: Double
        var tokensAt: Int64
        var overLimit = 0
        var lastPing: Int64 = 0
        var leaving = false
    }

    let connection: WebSocketConnection
    let state: Mutex<State>

    init(connection: WebSocketConnection, now: Int64, burst: Int) {
        self.connection = connection
        self.state = Mutex(State(openedAt: now, tokens: Double(burst), tokensAt: now))
    }

    var claims: AccessClaims? { state.withLock { $0.claims } }
    var userId: String? { state.withLock { $0.claims?.sub } }
    var sessionId: String? { state.withLock { $0.id } }

    /// The caller the room engine sees.
    var caller: Caller? {
        state.withLock { state in
            state.claims.map { Caller(id: $0.sub, name: $0.name ?? $0.sub, grants: $0.effectiveGrants) }
        }
    }

    /// Takes one request token; false when the connection is over its rate.
    func admit(now: Int64, perSecond: Double, burst: Int) -> (allowed: Bool, abusive: Bool) {
        state.withLock { state in
            let elapsed = Double(max(0, now - state.tokensAt)) / 1000
            state.tokens = min(Double(burst), state.tokens + elapsed * perSecond)
            state.tokensAt = now
            if state.tokens >= 1 {
                state.tokens -= 1
                state.overLimit = 0
                return (true, false)
            }
            state.overLimit += 1
            return (false, state.overLimit > burst * 2)
        }
    }

    func send(_ data: Data) { connection.send(data) }
}
