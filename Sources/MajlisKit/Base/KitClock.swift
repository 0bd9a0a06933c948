/// Time as the SDK sees it: a dependency, so tests move it by hand.
public protocol KitClock: Sendable {
    /// Unix milliseconds now.
    func now() -> Int64
    /// Suspends for `milliseconds`; throws when the task is cancelled.
    func sleep(milliseconds: Int64) async throws
}
