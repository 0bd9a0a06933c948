/// How a sender protects its audio, chosen from the loss its listeners see (the fraction lost
/// the server reports back): nothing on a clean network; Opus in-band FEC from 1%; RED with one
/// earlier frame from 3%; two earlier frames from 8%. Loss rises fast and falls slowly: a good
/// second after a bad one is not yet a good network. The bitrate backs off when the round trip
/// shows queues building (congestion) and when loss is very high.
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

    /// The loss the choice is made from (smoothed), 0...1; nil before the first report.
    public private(set) var loss: Double?
    private let fullBitrate: Int
    /// The lowest round trip seen, and reports in a row without queueing.
    private var baseRoundTrip: Double?
    private var calmReports = 0

    /// A policy at `bitrate`. Until the first report says how the network is, it sends two
    /// redundant copies (a second of extra bytes on a clean network; the first words of a call
    /// on a bad one).
    public init(bitrate: Int = 32_000) {
        fullBitrate = bitrate
        self.bitrate = bitrate
        fec = false
        fecLossPercent = 0
        redundancy = 2
    }

    /// Takes a new loss report (0...1) and, when known, the round trip (ms), and chooses again;
    /// returns whether anything changed. The bitrate follows congestion: a round trip well above
    /// the lowest seen (queues filling) steps it down (to 16 kb/s at least), calm brings it back
    /// up; very high loss caps it at 24 kb/s, so redundant copies cost less.
    @discardableResult
    public mutating func update(loss reported: Double, roundTrip: Double? = nil) -> Bool {
        let sample = min(1, max(0, reported))
        let smoothed = loss.map { sample > $0 ? sample : $0 * 0.7 + sample * 0.3 } ?? sample
        loss = smoothed
        let before = (fec, fecLossPercent, redundancy, bitrate)
        redundancy = smoothed >= 0.08 ? 2 : smoothed >= 0.03 ? 1 : 0
        // FEC steals bits from the frame itself: worth it alone on a lightly lossy network, not
        // beside full copies of earlier frames.
        fec = smoothed >= 0.01 && redundancy == 0
        fecLossPercent = fec ? Int((smoothed * 100).rounded(.up)) : 0
        var target = bitrate
        if let roundTrip {
            let base = min(baseRoundTrip ?? roundTrip, roundTrip)
            baseRoundTrip = base
            if roundTrip > base * 2 + 100 {
                target = max(16_000, bitrate - 8_000)
                calmReports = 0
            } else {
                calmReports += 1
                if calmReports >= 5 {
                    target = min(fullBitrate, bitrate + 4_000)
                    calmReports = 0
                }
            }
        }
        bitrate = smoothed >= 0.25 ? min(target, 24_000) : target
        return before != (fec, fecLossPercent, redundancy, bitrate)
    }
}
