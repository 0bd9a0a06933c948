/// How a sender protects its audio, chosen from the loss its listeners see (the fraction lost
/// the server reports back): nothing on a clean network; Opus in-band FEC from 1%; RED with one
/// earlier frame from 3%; two earlier frames from 8%. Loss rises fast and falls slowly: a good
/// second after a bad one is not yet a good network.
public struct ProtectionPolicy: Sendable {
    /// Opus in-band FEC on, and the loss it is sized for.
    public var fec: Bool
    public var fecLossPercent: Int
    /// Earlier frames carried in each packet (RFC 2198 RED): 0, 1 or 2.
    public var redundancy: Int

    /// How far back (in frames) the redundant copies reach: one copy is the previous frame; two
    /// are spread two and four frames back, so a burst of up to four lost packets is refilled as
    /// well as random loss is (a frame is lost only if its packet and both later copies are).
    public var distances: [Int] {
        switch redundancy {
        case 0: []
        case 1: [1]
        default: [2, 4]
        }
    }
    /// Opus target bitrate.
    public var bitrate: Int

    /// The loss the choice is made from (smoothed), 0...1.
    public private(set) var loss: Double = 0
    private let fullBitrate: Int

    /// A clean-network policy at `bitrate`.
    public init(bitrate: Int = 32_000) {
        fullBitrate = bitrate
        self.bitrate = bitrate
        fec = false
        fecLossPercent = 0
        redundancy = 0
    }

    /// Takes a new loss report (0...1) and chooses again; returns whether anything changed.
    @discardableResult
    public mutating func update(loss reported: Double) -> Bool {
        let sample = min(1, max(0, reported))
        loss = sample > loss ? sample : loss * 0.7 + sample * 0.3
        let before = (fec, fecLossPercent, redundancy, bitrate)
        redundancy = loss >= 0.08 ? 2 : loss >= 0.03 ? 1 : 0
        // FEC steals bits from the frame itself: worth it alone on a lightly lossy network, not
        // beside full copies of earlier frames.
        fec = loss >= 0.01 && redundancy == 0
        fecLossPercent = fec ? Int((loss * 100).rounded(.up)) : 0
        bitrate = fullBitrate
        return before != (fec, fecLossPercent, redundancy, bitrate)
    }
}
