/// A token bucket for rate limits, driven by the time passed in.
public struct TokenBucket: Sendable, Equatable {
    public private(set) var tokens: Double
    private var updatedAt: Int64

    public init(capacity: Int, now: Int64) {
        tokens = Double(capacity)
        updatedAt = now
    }

    /// Takes one token if there is one, refilling at `perSecond` up to `capacity` first.
    public mutating func take(capacity: Int, perSecond: Double, now: Int64) -> Bool {
        take(1, capacity: capacity, perSecond: perSecond, now: now)
    }

    /// Takes `count` tokens if there are as many (bytes, say), refilling first; none otherwise.
    public mutating func take(_ count: Int, capacity: Int, perSecond: Double, now: Int64) -> Bool {
        refill(capacity: capacity, perSecond: perSecond, now: now)
        guard tokens >= Double(count) else { return false }
        tokens -= Double(count)
        return true
    }

    /// Takes `count` tokens, or all there are (what was spent before it could be refused: an
    /// answer's bytes, say), refilling first.
    public mutating func drain(_ count: Int, capacity: Int, perSecond: Double, now: Int64) {
        refill(capacity: capacity, perSecond: perSecond, now: now)
        tokens = max(0, tokens - Double(count))
    }

    /// Whether the bucket would be full at `now`.
    public func isFull(capacity: Int, perSecond: Double, now: Int64) -> Bool {
        tokens + Double(max(0, now - updatedAt)) / 1000 * perSecond >= Double(capacity)
    }

    private mutating func refill(capacity: Int, perSecond: Double, now: Int64) {
        let elapsed = Double(max(0, now - updatedAt)) / 1000
        tokens = min(Double(capacity), tokens + elapsed * perSecond)
        updatedAt = max(updatedAt, now)
    }
}
