import MajlisProtocol

/// What one direction of one flow does to packets: a bottleneck of limited rate with a drop-tail
/// queue (when a rate is set), then bursty loss, then delay with jitter, keeping packet order
/// unless reordering is allowed.
public struct PathImpairment: Sendable {
    public var loss: GilbertElliott
    /// Milliseconds.
    public var delay: Double
    public var jitter: Double
    public var reorder: Bool
    /// The bottleneck's rate in bits per second, counting `overhead` bytes of headers per packet
    /// (IPv4 and UDP: 28); nil for none.
    public var rate: Double?
    /// The longest the bottleneck's queue holds a packet, milliseconds: a packet that would wait
    /// longer is dropped on arrival (drop-tail).
    public var queueLimit: Double
    public var overhead: Int
    /// Packets the full queue dropped so far (not counted in `loss`).
    public private(set) var queueDrops = 0
    private var random: SplitMix64
    private var lastRelease: Double = 0
    /// When the bottleneck has sent everything queued so far.
    private var linkFree: Double = 0

    public init(
        loss: Double, meanBurst: Double, delay: Double, jitter: Double, reorder: Bool, seed: UInt64, rate: Double? = nil,
        queueLimit: Double = 300, overhead: Int = 28
    ) {
        self.loss = GilbertElliott(loss: loss, meanBurst: meanBurst)
        self.delay = delay
        self.jitter = jitter
        self.reorder = reorder
        self.rate = rate
        self.queueLimit = queueLimit
        self.overhead = overhead
        random = SplitMix64(seed: seed)
    }

    /// How long a packet arriving now would wait in the bottleneck's queue, milliseconds.
    public func queueDelay(at now: Double) -> Double { max(0, linkFree - now) }

    /// When a packet of `bytes` (payload) arriving at `now` (ms) leaves, or nil if it is lost.
    public mutating func release(at now: Double, bytes: Int = 0) -> Double? {
        var start = now
        if let rate, rate > 0 {
            start = max(now, linkFree)
            if start - now > queueLimit {
                queueDrops += 1
                return nil
            }
            linkFree = start + Double((bytes + overhead) * 8) / rate * 1000
            start = linkFree
        }
        if loss.drops(random: random.unit()) { return nil }
        let offset = jitter > 0 ? (random.unit() * 2 - 1) * jitter : 0
        var at = start + max(0, delay + offset)
        if !reorder { at = max(at, lastRelease) }
        lastRelease = max(lastRelease, at)
        return at
    }
}
