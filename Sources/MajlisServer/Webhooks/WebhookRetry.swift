/// When a failed post is tried again: exponential backoff from one second, doubling up to ten
/// minutes, with jitter (a random half to whole of the step) so receivers coming back are not hit
/// by every sender at once; given up once the event is older than the retention time.
public struct WebhookRetry: Sendable, Equatable {
    public var first: Int64 = 1_000
    public var longest: Int64 = 600_000
    /// Milliseconds an event is retried for.
    public var retention: Int64

    public init(retention: Int64) {
        self.retention = retention
    }

    /// The delay (ms) before attempt `attempts + 1`, after `attempts` failures; `random` in 0..<1.
    public func delay(afterFailures attempts: Int, random: Double) -> Int64 {
        let step = min(longest, first << Int64(min(max(attempts - 1, 0), 20)))
        return step / 2 + Int64(Double(step / 2) * min(max(random, 0), 1))
    }

    /// What to do after a failure of an event made at `created`: try again at a time, or give up.
    public func next(afterFailures attempts: Int, created: Int64, now: Int64, random: Double) -> Int64? {
        let at = now + delay(afterFailures: attempts, random: random)
        return at - created > retention ? nil : at
    }
}
