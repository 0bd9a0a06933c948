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
        var requests: TokenBucket
        /// Chat across all the user's rooms: the per-room limit may not be multiplied by rooms.
        var chat: TokenBucket
        /// WebRTC offers (each costs a parse and a negotiation on the room's queue).
        var offers: TokenBucket
        /// Frames refused for rate in the current ten-second window, and when it began.
        var refused = 0
        var refusedSince: Int64
        var lastPing: Int64 = 0
        var leaving = false
    }

    let connection: WebSocketConnection
    let state: Mutex<State>
    /// Where this connection's frames are read when they are not on the service thread: one at
    /// a time, in order.
    let frames: DispatchQueue
    /// Frames handed to `frames` and not yet done.
    let queuedFrames = Atomic<Int>(0)

    init(connection: WebSocketConnection, now: Int64, burst: Int, chatBurst: Int, offerBurst: Int, frames target: DispatchQueue) {
        self.connection = connection
        frames = DispatchQueue(label: "majlis.session", target: target)
        self.state = Mutex(State(
            openedAt: now, requests: TokenBucket(capacity: burst, now: now), chat: TokenBucket(capacity: chatBurst, now: now),
            offers: TokenBucket(capacity: offerBurst, now: now), refusedSince: now))
    }

    var claims: AccessClaims? { state.withLock { $0.claims } }
    var userId: String? { state.withLock { $0.claims?.sub } }
    var sessionId: String? { state.withLock { $0.id } }

    /// The caller the room engine sees.
    var caller: Caller? {
        state.withLock { state in
            state.claims.map { Caller(id: $0.sub, name: DisplayName.clean($0.name ?? $0.sub), grants: $0.effectiveGrants) }
        }
    }

    /// Takes one request token for a frame (valid or not); false when the connection is over its
    /// rate. Abusive: more frames refused within ten seconds than the burst, twice over.
    func admit(now: Int64, perSecond: Double, burst: Int) -> (allowed: Bool, abusive: Bool) {
        state.withLock { state in
            if state.requests.take(capacity: burst, perSecond: perSecond, now: now) { return (true, false) }
            if now - state.refusedSince > 10_000 {
                state.refused = 0
                state.refusedSince = now
            }
            state.refused += 1
            return (false, state.refused > burst * 2)
        }
    }

    /// Takes one chat token of the user's limit across rooms.
    func admitChat(now: Int64, limits: RoomLimits) -> Bool {
        state.withLock { $0.chat.take(capacity: limits.chatBurst, perSecond: limits.chatPerSecond, now: now) }
    }

    /// Takes one WebRTC offer token.
    func admitOffer(now: Int64, perSecond: Double, burst: Int) -> Bool {
        state.withLock { $0.offers.take(capacity: burst, perSecond: perSecond, now: now) }
    }

    /// Queues an answer; `since` is when its request arrived (monotonic ns), for the write-delay figures.
    func send(_ data: Data, since: UInt64? = nil) { connection.send(data, since: since) }
}
