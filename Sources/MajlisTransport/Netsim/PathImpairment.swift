import MajlisProtocol

/// What one direction of one flow does to packets: bursty loss, then delay with jitter, keeping
/// packet order unless reordering is allowed.
public struct PathImpairment: Sendable {
    public var loss: GilbertElliott
    /// Milliseconds.
    public var delay: Double
    public var jitter: Double
    public var reorder: Bool
    private var random: SplitMix64
    private var lastRelease: Double = 0

    public init(loss: Double, meanBurst: Double, delay: Double, jitter: Double, reorder: Bool, seed: UInt64) {
        self.loss = GilbertElliott(loss: loss, meanBurst: meanBurst)
        self.delay = delay
        self.jitter = jitter
        self.reorder = reorder
        random = SplitMix64(seed: seed)
    }

    /// When a packet arriving at `now` (ms) leaves, or nil if it is lost.
    public mutating func release(at now: Double) -> Double? {
        if loss.drops(random: random.unit()) { return nil }
        let offset = jitter > 0 ? (random.unit() * 2 - 1) * jitter : 0
        var at = now + max(0, delay + offset)
        if !reorder { at = max(at, lastRelease) }
        lastRelease = max(lastRelease, at)
        return at
    }
}
