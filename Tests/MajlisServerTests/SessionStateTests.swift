import MajlisProtocol
import MajlisServer
import MajlisTransport
import Testing

/// A session's state machine in memory, on a manual clock: hello and its deadline, renewal and
/// the expiry warning, the heartbeat, and rate admission.
struct SessionStateTests {
    static let limits = SessionState.Limits(
        requestsPerSecond: 10, requestBurst: 5, chatPerSecond: 1, chatBurst: 2, offersPerSecond: 0.5, offerBurst: 1, helloTimeout: 10,
        heartbeat: 20)

    static func claims(_ user: String, expiresAt seconds: Int64) -> AccessClaims {
        AccessClaims(sub: user, exp: seconds, grants: Grants())
    }

    /// Reads are admitted while the answers before them left budget: a large answer spends it
    /// (however large, it was sent), and the rate refills it.
    @Test func readsWaitForTheAnswerBudgetToRefill() {
        var state = SessionState(openedAt: 0, limits: Self.limits)
        let burst = Self.limits.answerBurstBytes
        var admitted: [Bool] = []
        admitted.append(state.admitRead(now: 0))
        state.chargeAnswer(burst * 3, now: 0)
        admitted.append(state.admitRead(now: 0))
        // A second refills a second's worth, whatever was spent past the burst.
        admitted.append(state.admitRead(now: 1_000))
        state.chargeAnswer(Self.limits.answerBytesPerSecond / 2, now: 1_000)
        admitted.append(state.admitRead(now: 1_000))
        state.chargeAnswer(Self.limits.answerBytesPerSecond, now: 1_000)
        admitted.append(state.admitRead(now: 1_000))
        #expect(admitted == [true, false, true, true, false])
    }

    @Test func aConnectionWithoutHelloIsClosedAtItsDeadline() {
        var state = SessionState(openedAt: 1_000, limits: Self.limits)
        #expect(state.due(now: 11_000, monotonic: 0, lastReceived: 0) == .nothing)
        #expect(state.due(now: 11_001, monotonic: 0, lastReceived: 0) == .close(code: CloseCode.unauthorized.rawValue, reason: "no hello within 10 s"))
    }

    @Test func helloOnceThenRenewForTheSameUser() throws {
        var state = SessionState(openedAt: 0, limits: Self.limits)
        #expect(state.caller == nil)
        try state.greet(Self.claims("huda", expiresAt: 3_600), id: "s1")
        #expect(state.id == "s1" && state.caller?.id == "huda")
        #expect(throws: ProtocolError(.badRequest, "hello was already sent on this connection")) {
            try state.greet(Self.claims("omar", expiresAt: 3_600), id: "s2")
        }
        #expect(throws: ProtocolError(.forbidden, "the new token is for another user")) { try state.renew(Self.claims("omar", expiresAt: 7_200)) }
        try state.renew(Self.claims("huda", expiresAt: 7_200))
        #expect(state.claims?.exp == 7_200 && state.id == "s1")
    }

    /// The warning comes 30 s before expiry, once per token; a renewed token is warned of again;
    /// an expired one closes the connection.
    @Test func expiryIsWarnedOfOncePerTokenThenCloses() throws {
        var state = SessionState(openedAt: 0, limits: Self.limits)
        try state.greet(Self.claims("huda", expiresAt: 100), id: "s1")
        #expect(state.due(now: 69_999, monotonic: 0, lastReceived: 0) == .nothing)
        #expect(state.due(now: 70_000, monotonic: 0, lastReceived: 0) == .warnExpiry(expiresAt: 100))
        #expect(state.due(now: 71_000, monotonic: 0, lastReceived: 0) == .nothing)
        try state.renew(Self.claims("huda", expiresAt: 200))
        #expect(state.due(now: 100_000, monotonic: 0, lastReceived: 0) == .nothing)
        #expect(state.due(now: 170_000, monotonic: 0, lastReceived: 0) == .warnExpiry(expiresAt: 200))
        #expect(state.due(now: 200_000, monotonic: 0, lastReceived: 0) == .close(code: CloseCode.unauthorized.rawValue, reason: "token expired"))
    }

    /// Silent past one heartbeat (20 s): pinged, at most every half heartbeat; past two: closed.
    @Test func aSilentConnectionIsPingedThenClosed() throws {
        var state = SessionState(openedAt: 0, limits: Self.limits)
        try state.greet(Self.claims("huda", expiresAt: 3_600), id: "s1")
        #expect(state.due(now: 0, monotonic: 120_000, lastReceived: 100_000) == .nothing)
        #expect(state.due(now: 0, monotonic: 120_001, lastReceived: 100_000) == .ping)
        #expect(state.due(now: 0, monotonic: 125_000, lastReceived: 100_000) == .nothing)
        #expect(state.due(now: 0, monotonic: 130_002, lastReceived: 100_000) == .ping)
        // Heard from: quiet again.
        #expect(state.due(now: 0, monotonic: 131_000, lastReceived: 130_500) == .nothing)
        #expect(state.due(now: 0, monotonic: 170_501, lastReceived: 130_500) == .close(code: CloseCode.goingAway.rawValue, reason: "heartbeat timeout"))
    }

    /// Frames over the rate are refused; refused more than twice the burst within ten seconds,
    /// the connection is abusive. Chat and offers have buckets of their own.
    @Test func framesChatAndOffersAreAdmittedAtTheirRates() {
        var state = SessionState(openedAt: 0, limits: Self.limits)
        #expect((0..<5).map { _ in state.admit(now: 0) } == Array(repeating: .allowed, count: 5))
        #expect((0..<10).map { _ in state.admit(now: 0) } == Array(repeating: .refused, count: 10))
        #expect(state.admit(now: 0) == .abusive)
        // A second later the bucket has refilled (ten a second, five at most).
        #expect(state.admit(now: 1_000) == .allowed)
        // Ten seconds on, the count of refusals starts again.
        #expect((0..<4).map { _ in state.admit(now: 1_000) } == Array(repeating: .allowed, count: 4))
        #expect(state.admit(now: 11_001) == .allowed)
        #expect(state.admitChat(now: 0) && state.admitChat(now: 0) && !state.admitChat(now: 0) && state.admitChat(now: 1_000))
        #expect(state.admitOffer(now: 0) && !state.admitOffer(now: 1_000) && state.admitOffer(now: 2_000))
    }

    @Test func leavingIsRemembered() {
        var state = SessionState(openedAt: 0, limits: Self.limits)
        #expect(!state.leaving)
        state.leave()
        #expect(state.leaving)
    }
}
