/// Time as the SDK sees it: a dependency, so tests move it by hand.
public protocol KitClock: Sendable {
    /// Unix milliseconds now.
    func now() -> Int64
    /// Suspends for `milliseconds`; throws when the task is cancelled.
    func sleep(milliseconds: Int64) async throws
    /// Suspends until `now()` reaches `deadline` (at once when it has); throws when the task is
    /// cancelled.
    func sleep(until deadline: Int64) async throws
}

extension KitClock {
    public func sleep(until deadline: Int64) async throws {
        // Until, not for: a sleep that ends a millisecond early (rounding) sleeps again.
        while case let left = deadline - now(), left > 0 { try await sleep(milliseconds: left) }
    }
}
