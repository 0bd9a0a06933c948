import MajlisProtocol
import MajlisRoom
import MajlisTransport

/// One connection's session as a pure state machine: who it is once `hello` succeeded, its rate
/// limits, and what its timers call for. Times and tokens go in, decisions come out; the
/// server carries them out on the connection (`Session`, `SignalingServer`). Tested in memory,
/// without sockets (`SessionStateTests`).
public struct SessionState: Sendable {
    /// What bounds a session (from the server's configuration).
    public struct Limits: Sendable {
        /// Frames per second and burst, every frame counted (decodable or not).
        public var requestsPerSecond: Double
        public var requestBurst: Int
        /// Chat across all the user's rooms.
        public var chatPerSecond: Double
        public var chatBurst: Int
        /// WebRTC offers.
        public var offersPerSecond: Double
        public var offerBurst: Int
        /// Bytes of answers to reads (`room.join`, `room.sync`, `member.list`, `chat.history`)
        /// a connection may be sent a second, after a burst: a room's snapshot can pass a
        /// megabyte (its attributes), and read fifty times a second it would be fifty a second.
        public var answerBytesPerSecond = 1 << 20
        public var answerBurstBytes = 8 << 20
        /// Seconds a connection may take to say `hello`.
        public var helloTimeout: Int
        /// The heartbeat in seconds: a connection silent this long is pinged, twice this long closed.
        public var heartbeat: Int

        public init(
            requestsPerSecond: Double, requestBurst: Int, chatPerSecond: Double, chatBurst: Int, offersPerSecond: Double, offerBurst: Int,
            helloTimeout: Int, heartbeat: Int
        ) {
            self.requestsPerSecond = requestsPerSecond
            self.requestBurst = requestBurst
            self.chatPerSecond = chatPerSecond
            self.chatBurst = chatBurst
            self.offersPerSecond = offersPerSecond
            self.offerBurst = offerBurst
            self.helloTimeout = helloTimeout
            self.heartbeat = heartbeat
        }
    }

    /// How a frame is admitted.
    public enum Admission: Equatable, Sendable {
        case allowed
        /// Over the rate: answered `rate_limited`.
        case refused
        /// More frames refused within ten seconds than twice the burst: the connection is closed.
        case abusive
    }

    /// What the session's timers call for now.
    public enum Due: Equatable, Sendable {
        case nothing
        /// Silent past the heartbeat: ping it.
        case ping
        /// The token expires within 30 s: tell the client (`token.expiring`), once per token.
        case warnExpiry(expiresAt: Int64)
        /// Close it: no `hello` in time, the token expired, or silent past two heartbeats.
        case close(code: UInt16, reason: String)
    }

    public let limits: Limits
    /// Wall-clock ms when the connection opened.
    public let openedAt: Int64
    /// Set by `hello`.
    public private(set) var id: String?
    public private(set) var claims: AccessClaims?
    /// The device the client named at `hello` ("" when it named none): a user's sessions on
    /// different devices live side by side; a newer one on the same device replaces the older.
    public private(set) var device = ""
    /// Wall-clock ms when `hello` was taken.
    public private(set) var greetedAt: Int64?
    /// The user said `bye`, or a newer connection replaced this one: its rooms do not hold it.
    public private(set) var leaving = false
    private var expiryWarned = false
    private var lastPing: Int64 = 0
    private var requests: TokenBucket
    private var chat: TokenBucket
    private var offers: TokenBucket
    private var answers: TokenBucket
    private var refused = 0
    private var refusedSince: Int64

    public init(openedAt: Int64, limits: Limits) {
        self.limits = limits
        self.openedAt = openedAt
        requests = TokenBucket(capacity: limits.requestBurst, now: openedAt)
        chat = TokenBucket(capacity: limits.chatBurst, now: openedAt)
        offers = TokenBucket(capacity: limits.offerBurst, now: openedAt)
        answers = TokenBucket(capacity: limits.answerBurstBytes, now: openedAt)
        refusedSince = openedAt
    }

    /// The caller the room engine sees, once greeted.
    public var caller: Caller? {
        claims.map { Caller(id: $0.sub, name: DisplayName.clean($0.name ?? $0.sub), grants: $0.effectiveGrants) }
    }

    /// Takes one request token for a frame at `now` (wall-clock ms).
    public mutating func admit(now: Int64) -> Admission {
        if requests.take(capacity: limits.requestBurst, perSecond: limits.requestsPerSecond, now: now) { return .allowed }
        if now - refusedSince > 10_000 {
            refused = 0
            refusedSince = now
        }
        refused += 1
        return refused > limits.requestBurst * 2 ? .abusive : .refused
    }

    /// Takes one chat token of the user's limit across rooms.
    public mutating func admitChat(now: Int64) -> Bool {
        chat.take(capacity: limits.chatBurst, perSecond: limits.chatPerSecond, now: now)
    }

    /// Takes one WebRTC offer token.
    public mutating func admitOffer(now: Int64) -> Bool {
        offers.take(capacity: limits.offerBurst, perSecond: limits.offersPerSecond, now: now)
    }

    /// Whether a read may be answered now: not while the answers before it spent the budget.
    public mutating func admitRead(now: Int64) -> Bool {
        answers.take(1, capacity: limits.answerBurstBytes, perSecond: Double(limits.answerBytesPerSecond), now: now)
    }

    /// Charges an answer of `bytes` to the budget reads are admitted by.
    public mutating func chargeAnswer(_ bytes: Int, now: Int64) {
        answers.drain(bytes, capacity: limits.answerBurstBytes, perSecond: Double(limits.answerBytesPerSecond), now: now)
    }

    /// `hello` with verified `claims` as session `id` on `device`, at `now` (default: when the
    /// connection opened): `bad_request` if this connection already said it.
    public mutating func greet(_ claims: AccessClaims, id: String, device: String = "", at now: Int64? = nil) throws(ProtocolError) {
        guard self.claims == nil else { throw ProtocolError(.badRequest, "hello was already sent on this connection") }
        self.claims = claims
        self.id = id
        self.device = device
        greetedAt = now ?? openedAt
    }

    /// `renew` with verified `claims`: for the same user only; the expiry warning is due again for the new token.
    public mutating func renew(_ claims: AccessClaims) throws(ProtocolError) {
        guard claims.sub == self.claims?.sub else { throw ProtocolError(.forbidden, "the new token is for another user") }
        self.claims = claims
        expiryWarned = false
    }

    /// The user leaves through this connection (`bye`), or a newer one replaced it.
    public mutating func leave() { leaving = true }

    /// What is due at `now` (wall-clock ms) for a connection last heard from at `lastReceived`
    /// (monotonic ms, as `monotonic`).
    public mutating func due(now: Int64, monotonic: Int64, lastReceived: Int64) -> Due {
        guard let claims else {
            return now - openedAt > Duration.seconds(limits.helloTimeout).milliseconds
                ? .close(code: CloseCode.unauthorized.rawValue, reason: "no hello within \(limits.helloTimeout) s") : .nothing
        }
        let expiry = claims.expiresAtMilliseconds
        if expiry <= now { return .close(code: CloseCode.unauthorized.rawValue, reason: "token expired") }
        if !expiryWarned && expiry - 30_000 <= now {
            expiryWarned = true
            return .warnExpiry(expiresAt: claims.exp)
        }
        let heartbeat = Duration.seconds(limits.heartbeat).milliseconds
        let idle = monotonic - lastReceived
        if idle > 2 * heartbeat { return .close(code: CloseCode.goingAway.rawValue, reason: "heartbeat timeout") }
        if idle > heartbeat && monotonic - lastPing > heartbeat / 2 {
            lastPing = monotonic
            return .ping
        }
        return .nothing
    }
}
