/// Bursty packet loss (the Gilbert-Elliott two-state model): in the good state nothing is lost,
/// in the bad state everything is; the chances of switching set the average loss and the mean
/// length of a burst. A mean burst of 1 is plain random loss.
public struct GilbertElliott: Sendable {
    /// Chance per packet of going from good to bad, and from bad to good.
    public let enterBad: Double
    public let leaveBad: Double
    public private(set) var isBad = false

    /// A model losing `loss` (0...1) of packets in bursts of `meanBurst` (>= 1) on average.
    public init(loss: Double, meanBurst: Double = 1) {
        let loss = min(0.99, max(0, loss))
        leaveBad = 1 / max(1, meanBurst)
        enterBad = loss >= 0.99 ? 1 : loss * leaveBad / (1 - loss)
    }

    /// Whether the next packet is lost; `random` is uniform in 0..<1.
    public mutating func drops(random: Double) -> Bool {
        isBad = isBad ? random >= leaveBad : random < enterBad
        return isBad
    }
}
