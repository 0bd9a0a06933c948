/// How a sender protects its audio, chosen from the loss its listeners see (the fraction lost
/// the server reports back): nothing on a clean network; Opus in-band FEC from 1%; RED with one
/// earlier frame from 3%; two earlier frames from 8%, three from 30% or where the round trip is
/// too long for retransmissions to be waited for (at 40% random loss on each leg the third copy
/// took calls from PESQ 2.89 to 3.49, median of 30 seeds, and none under 2.5; at 30%, 3.60 to
/// 3.71). Loss rises fast and falls slowly: a good second after a bad
/// one is not yet a good network. The bitrate backs off when the round trip shows queues building
/// (congestion) and when loss is very high.
///
/// When the server says how much the uplink carries (`update(capacity:)`), all of it (headers,
/// redundant copies, bitrate) is fitted under 95% of that: redundancy is kept while the bitrate beside
/// it stays at 16 kb/s or more; without it, 20 ms frames travel two or three to a packet when
/// that is what leaves 20 kb/s for the voice (on a thin link the headers of fifty packets a
/// second cost 23 kb/s), and FEC is off (retransmissions repair for less).
public struct ProtectionPolicy: Sendable {
    /// Opus in-band FEC on, and the loss it is sized for.
    public var fec: Bool
    public var fecLossPercent: Int
    /// Earlier frames carried in each packet (RFC 2198 RED): 0 to 3.
    public var redundancy: Int

    /// How far back (in frames) the redundant copies reach: one copy is the previous frame; two
    /// are spread two and four frames back, so a burst of up to four lost packets is refilled as
    /// well as random loss is (a frame is lost only if its packet and both later copies are);
    /// three reach six back.
    public var distances: [Int] {
        switch redundancy {
        case 0: []
        case 1: [1]
        case 2: [2, 4]
        default: [2, 4, 6]
        }
    }
    /// Opus target bitrate.
    public var bitrate: Int
    /// 20 ms frames sent in each packet: 1, 2 or 3 (only 1 with redundancy).
    public var framesPerPacket = 1
    /// What the uplink carries, bits per second with headers (nil: no limit known).
    public private(set) var capacity: Int?
    /// Whether the capacity binds: then every frame keeps close to the bitrate (constrained
    /// VBR), as loud speech would otherwise overshoot it.
    public private(set) var squeezed = false

    /// Bytes every packet costs besides its payload: IPv4 and UDP (28), RTP (12), the audio
    /// level extension (8) and the SRTP tag (10).
    public static let packetOverhead = 58

    /// The loss the choice is made from (smoothed), 0...1; nil before the first report.
    public private(set) var loss: Double?
    /// The loss protected for before reports say otherwise: the start's assumption, falling to
    /// 70% of itself with each report (as a measured loss falls).
    private var assumedLoss: Double
    private let fullBitrate: Int
    /// What the loss and the round trip ask for, before the capacity is applied.
    private var wantedRedundancy: Int
    private var wantedBitrate: Int
    /// The lowest round trip seen, and reports in a row without queueing.
    private var baseRoundTrip: Double?
    private var calmReports = 0

    /// A policy at `bitrate` that sends redundant copies as for `assumedLoss` until reports say
    /// how the network is, and lowers them as slowly as after a measured loss: a call's first
    /// clean second is not yet a clean network. By default two copies until the second clean
    /// report, then one until the fourth: a few seconds of extra bytes on a clean network, the
    /// first words of a call on a bad one (at 10% bursty loss, with the copies gone after one
    /// clean first second, as one call in five had, a burst then cost the first sentence). FEC,
    /// which takes its bits from the voice, follows measured loss only.
    public init(bitrate: Int = 32_000, assumedLoss: Double = 0.12) {
        fullBitrate = bitrate
        self.bitrate = bitrate
        wantedBitrate = bitrate
        self.assumedLoss = assumedLoss
        fec = false
        fecLossPercent = 0
        redundancy = 0
        wantedRedundancy = 0
        choose(loss: assumedLoss, target: bitrate)
        fit()
    }

    /// Takes what the server says the uplink carries (bits per second, headers counted) and
    /// fits the protection under it; returns whether anything changed.
    @discardableResult
    public mutating func update(capacity: Int) -> Bool {
        let before = (fec, fecLossPercent, redundancy, bitrate, framesPerPacket)
        self.capacity = max(8_000, capacity)
        fit()
        return before != (fec, fecLossPercent, redundancy, bitrate, framesPerPacket)
    }

    /// Bits per second on the path at `bitrate` with `redundancy` earlier frames per packet and
    /// `frames` frames per packet.
    public static func wireRate(bitrate: Int, redundancy: Int, frames: Int) -> Int {
        let packets = 50 / Double(frames)
        let header = packetOverhead + (redundancy > 0 ? 4 * redundancy + 1 : 0)
        return Int(packets * Double(header * 8)) + bitrate * (1 + redundancy)
    }

    /// The highest bitrate (whole kb/s) that fits `capacity` with this redundancy and packing.
    private static func affordable(_ capacity: Int, redundancy: Int, frames: Int) -> Int {
        let spare = capacity - wireRate(bitrate: 0, redundancy: redundancy, frames: frames)
        return spare / (1 + redundancy) / 1_000 * 1_000
    }

    /// The share of the uplink's capacity a squeezed sender fills. The rest is for its
    /// retransmissions, reports and loud frames' overshoot, and for a thin downlink to the
    /// listeners, which carries the same stream. Filling all of it (89% of a 40 kb/s link,
    /// which the estimate reads as 36) kept both queues standing, so repairs crossed them late
    /// and playout wobbled with them: 3.24 PESQ median, one of 30 calls at 2.31; at 95% (84%
    /// of the link), 3.53 (30 seeds on virtual time; 90% and 93% gave 3.27 and 3.37 for their
    /// lower bitrates).
    static let capacityShare = 0.95

    /// Applies the capacity to what loss and round trip ask for.
    private mutating func fit() {
        squeezed = false
        let usable = capacity.map { Int(Double($0) * Self.capacityShare) }
        guard let usable, Self.wireRate(bitrate: wantedBitrate, redundancy: wantedRedundancy, frames: 1) > usable else {
            (redundancy, bitrate, framesPerPacket) = (wantedRedundancy, wantedBitrate, 1)
            fec = (loss ?? 0) >= 0.01 && redundancy == 0
            fecLossPercent = fec ? Int(((loss ?? 0) * 100).rounded(.up)) : 0
            return
        }
        // Squeezed: FEC would take its bits from the voice itself; a retransmission costs only
        // what is lost.
        (fec, fecLossPercent, squeezed) = (false, 0, true)
        for copies in stride(from: wantedRedundancy, through: 1, by: -1) {
            let rate = Self.affordable(usable, redundancy: copies, frames: 1)
            if rate >= 16_000 {
                (redundancy, bitrate, framesPerPacket) = (copies, min(rate, wantedBitrate), 1)
                return
            }
        }
        for frames in 1...3 {
            let rate = Self.affordable(usable, redundancy: 0, frames: frames)
            if rate >= 20_000 || frames == 3 {
                (redundancy, bitrate, framesPerPacket) = (0, max(6_000, min(rate, wantedBitrate)), frames)
                return
            }
        }
    }

    /// The round trip (ms) past which a listener no longer waits for retransmissions: playout
    /// waits at most 450 ms for a repair, which takes about 1.25 round trips and 100 ms.
    public static let longRoundTrip = 280.0

    /// Reports covering fewer packets than this may raise the loss, not lower it: a second of
    /// DTX silence (two or three packets) or a call's first few packets say little of the path,
    /// and one lucky such report would leave the next words unprotected.
    public static let packetsToLowerLoss = 20

    /// Takes a new loss report (0...1) and, when known, the round trip (ms) and how many packets
    /// the report covers, and chooses again; returns whether anything changed. The bitrate
    /// follows congestion: a round trip well above the lowest seen (queues filling) steps it down
    /// (to 16 kb/s at least), calm brings it back up; very high loss caps it at 24 kb/s, so
    /// redundant copies cost less.
    @discardableResult
    public mutating func update(loss reported: Double, roundTrip: Double? = nil, packets: Int? = nil) -> Bool {
        var sample = min(1, max(0, reported))
        if let packets, packets < Self.packetsToLowerLoss {
            // Before any report that says much, the first protection stays.
            guard let loss else { return false }
            sample = max(sample, loss)
        }
        let smoothed = loss.map { sample > $0 ? sample : $0 * 0.7 + sample * 0.3 } ?? sample
        loss = smoothed
        assumedLoss *= 0.7
        let before = (fec, fecLossPercent, redundancy, bitrate, framesPerPacket)
        var target = wantedBitrate
        if let roundTrip {
            let base = min(baseRoundTrip ?? roundTrip, roundTrip)
            baseRoundTrip = base
            if roundTrip > base * 2 + 100 {
                target = max(16_000, wantedBitrate - 8_000)
                calmReports = 0
            } else {
                calmReports += 1
                if calmReports >= 5 {
                    target = min(fullBitrate, wantedBitrate + 4_000)
                    calmReports = 0
                }
            }
        }
        // Where a lost packet's retransmission would come too late to be played (a round trip
        // over `longRoundTrip`), copies are the only repair, and a third one is worth its bits
        // (at 20% loss on each leg of a 600 ms round trip: 2.76 -> 3.29 PESQ, median of five,
        // 20 ms more mouth to ear for the farther copy). The voice then gets 24 kb/s. FEC steals
        // bits from the frame itself: worth it alone on a lightly lossy network, not beside full
        // copies of earlier frames (`fit` sets it).
        choose(loss: max(smoothed, assumedLoss), target: target)
        fit()
        return before != (fec, fecLossPercent, redundancy, bitrate, framesPerPacket)
    }

    /// The loss from which a third copy is sent however short the path: where a frame and both
    /// its copies are too often lost together for retransmissions to keep up.
    static let lossForThirdCopy = 0.3

    /// What `loss` asks for, the bitrate aimed at being `target`.
    private mutating func choose(loss: Double, target: Int) {
        let long = (baseRoundTrip ?? 0) > Self.longRoundTrip
        wantedRedundancy = loss >= 0.08 ? (long || loss >= Self.lossForThirdCopy ? 3 : 2) : loss >= 0.03 ? 1 : 0
        wantedBitrate = loss >= 0.25 || wantedRedundancy == 3 ? min(target, 24_000) : target
    }
}
