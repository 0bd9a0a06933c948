/// Time as every part of Majlis reads it: whole milliseconds on a clock given as a dependency, so
/// that a test moves it by hand. The server's wall time (`SystemClock`: token expiry, resume grace,
/// room timers), its monotonic time (`MonotonicClock`: timeouts, leases, heartbeats) and the SDK's
/// clock are all of this one shape; `ManualClock` stands in for any of them.
///
/// Instants are `Int64` milliseconds on the clock (Unix milliseconds for a wall clock, as the
/// protocol carries them); lengths of time are `Duration`, turned into milliseconds only by
/// `Duration.milliseconds`.
public protocol MillisecondClock: Sendable {
    /// Milliseconds now.
    func now() -> Int64
    /// Suspends for `milliseconds`; throws when the task is cancelled.
    func sleep(milliseconds: Int64) async throws
    /// Suspends until `now()` reaches `deadline` (at once when it has); throws when the task is
    /// cancelled.
    func sleep(until deadline: Int64) async throws
}

extension MillisecondClock {
    public func sleep(until deadline: Int64) async throws {
        // Until, not for: a sleep that ends a millisecond early (rounding) sleeps again.
        while case let left = deadline - now(), left > 0 { try await sleep(milliseconds: left) }
    }

    /// Suspends for `duration`; throws when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await sleep(milliseconds: duration.milliseconds)
    }

    /// The instant `duration` after now.
    public func now(plus duration: Duration) -> Int64 { now() + duration.milliseconds }
}
