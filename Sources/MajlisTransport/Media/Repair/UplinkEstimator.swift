import MajlisProtocol

/// How much a speaker's uplink carries, judged by the server from when its packets arrive (a
/// delay-based estimate in the manner of WebRTC's congestion control). A sender faster than its
/// path fills a queue somewhere on it: each packet then takes longer than the one before, and
/// the rate packets arrive at is what the path carries. Seeing that (the trend of transit times
/// rising, a queue above the path's fastest transit), the estimate becomes 85% of the rate that
/// arrived, and the speaker is told (RTCP REMB) so it fits its bitrate, redundancy and packet
/// size under it before the queue drops packets. Random jitter has no trend and is not taken
/// for a queue.
///
/// After a cut the estimate grows while the speaker uses it: quickly up to 90% of the rate that
/// overflowed, then not at all for fifteen seconds, then slowly (probing for more).
///
/// Before the first word, a probe train (`UplinkProbe`: padded bindings paced at about 250 kb/s)
/// shows the same thing: when its packets arrive ever later than they were sent (each waiting
/// behind the one before), the rate they arrived at (with the media that arrived between them)
/// is what the path carries, and the estimate starts at 85% of it. So a speaker on a thin link
/// starts speaking within it, instead of overflowing its queue for the second a speech-driven
/// estimate takes.
///
/// Pure: time comes in as milliseconds on one monotonic clock.
public struct UplinkEstimator: Sendable {
    /// The most the speaker should send, bits per second with IP and UDP headers; nil: no limit
    /// found yet.
    public private(set) var estimate: Int?
    /// Bytes a packet costs on the path beyond its UDP payload (IPv4 and UDP headers).
    public static let headerBytes = 28

    private var arrivals: [(time: Double, bits: Int)] = []
    private var arrivalIndex = 0
    private var transits: [(time: Double, transit: Double)] = []
    /// The lowest transit of each of the last ten seconds.
    private var floors: [(second: Int, transit: Double)] = []
    private var highest: UInt16?
    private var firstTimestamp: UInt32?
    private var lastTimestamp: UInt32 = 0
    private var unwrapped: Int64 = 0
    private var lastDecrease = -Double.infinity
    /// Since when the queue has been rising fast, or standing (nil: it is not).
    private var risingSince: Double?
    private var standingSince: Double?
    private var lastChange = -Double.infinity
    private var lastReport = -Double.infinity
    private var reported: Int?
    /// The rate that arrived when the path last overflowed, bits per second.
    private var overflowRate: Double?
    /// The probe train arriving: send time (ms from the first packet's), arrival, bits.
    private var train: [(sent: Double, arrival: Double, bits: Int)] = []
    private var trainStart: UInt32 = 0
    /// Media packets that arrived while the train did (arrival, bits): on a path the train
    /// keeps busy, they took their share of it too.
    private var trainCompany: [(arrival: Double, bits: Int)] = []
    /// Packets of the probe train kept now (at most 64).
    var probeTrainLength: Int { train.count }

    public init() {}

    /// Takes a packet of `bytes` (UDP payload) and `sequence` that arrived at `now`; `timestamp` is the RTP
    /// timestamp (48 kHz) of its last frame for a first transmission, nil for a retransmission. Returns the
    /// estimate to tell the speaker now, or nil.
    public mutating func packet(bytes: Int, sequence: UInt16, timestamp: UInt32?, at now: Double) -> Int? {
        arrivals.append((now, (bytes + Self.headerBytes) * 8))
        if let last = train.last, now - last.arrival < 1_000, trainCompany.count < 256 {
            trainCompany.append((now, (bytes + Self.headerBytes) * 8))
        }
        while arrivals.count > 10, let first = arrivals.first, now - first.time > 200 { arrivals.removeFirst() }
        // Only packets newer than all before tell the path's delay: a late retransmission, or
        // one reordered, would look like a queue.
        if let highest, Int16(bitPattern: sequence &- highest) <= 0 { return nil }
        highest = sequence
        guard let timestamp else { return nil }
        record(transit: now - mediaTime(timestamp), at: now)
        return decide(at: now)
    }

    /// Takes a packet of a probe train (`bytes` of UDP payload) that arrived at `now`. Returns the
    /// estimate to tell the speaker now, or nil.
    public mutating func probe(_ probe: UplinkProbe, bytes: Int, at now: Double) -> Int? {
        if let last = train.last, now - last.arrival < 1_000 {
            guard train.count < 64 else { return nil }  // a train is ten packets: no more is kept
            train.append((Double(Int32(bitPattern: probe.sentAt &- trainStart)), now, (bytes + Self.headerBytes) * 8))
        } else {
            trainStart = probe.sentAt
            train = [(0, now, (bytes + Self.headerBytes) * 8)]
            trainCompany.removeAll()
        }
        guard train.count >= 3 else { return nil }
        let sent = train.map(\.sent)
        guard let earliest = sent.min(), let latest = sent.max(), latest - earliest >= 30 else { return nil }
        // Arrivals that lag their sending more with every packet, the later half of the train
        // all well behind the earlier: a queue. (Jitter on a path fast enough for the train
        // scatters them around no trend, and delays some packets, not all.)
        let lags: [Double] = train.sorted { $0.sent < $1.sent }.map { $0.arrival - $0.sent }
        let half = (lags.count + 1) / 2
        let rise: Double = lags[half...].min()! - lags[..<half].min()!
        guard rise >= 120, Self.slope(train.map { ($0.sent, $0.arrival - $0.sent) }) >= 1 else { return nil }
        guard let capacity = Self.dispersion(of: train.map { ($0.arrival, $0.bits) }, company: trainCompany), capacity < 150_000 else {
            return nil  // a queue, but on a path faster than any voice needs: nothing to fit
        }
        estimate = Int(capacity * 0.85)
        overflowRate = capacity
        lastDecrease = now
        lastChange = now
        transits.removeAll()
        risingSince = nil
        standingSince = nil
        return report(at: now)
    }

    /// What a busy path carried (bits per second), from the gaps between a probe train's
    /// packets as they arrived: each gap is the time the later packet took on the path, and
    /// that of the media (`company`) that arrived between the two. A gap that hides a packet
    /// lost past the queue, or an idle moment, is far longer than the rest: gaps carrying less
    /// than 70% of the best one's rate are left out.
    static func dispersion(of probes: [(arrival: Double, bits: Int)], company: [(arrival: Double, bits: Int)]) -> Double? {
        let arrivals = probes.sorted { $0.arrival < $1.arrival }
        let gaps: [(bits: Int, time: Double)] = zip(arrivals, arrivals.dropFirst()).compactMap { earlier, later in
            let time = later.arrival - earlier.arrival
            guard time > 0 else { return nil }
            let between = company.lazy.filter { $0.arrival > earlier.arrival && $0.arrival <= later.arrival }.reduce(0) { $0 + $1.bits }
            return (later.bits + between, time)
        }
        guard let best = gaps.map({ Double($0.bits) / $0.time }).max() else { return nil }
        let kept = gaps.filter { Double($0.bits) / $0.time >= best * 0.7 }
        return Double(kept.reduce(0) { $0 + $1.bits }) / kept.reduce(0) { $0 + $1.time } * 1000
    }

    /// The least-squares slope of `points`.
    static func slope(_ points: [(x: Double, y: Double)]) -> Double {
        let count = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.x } / count
        let meanY = points.reduce(0) { $0 + $1.y } / count
        var covariance = 0.0
        var variance = 0.0
        for point in points {
            covariance += (point.x - meanX) * (point.y - meanY)
            variance += (point.x - meanX) * (point.x - meanX)
        }
        return variance > 0 ? covariance / variance : 0
    }

    /// The rate that arrived in the last 200 ms (and at least the last ten packets), bits per
    /// second.
    var arrivalRate: Double {
        guard let first = arrivals.first, let last = arrivals.last, last.time - first.time >= 100 else { return 0 }
        return Double(arrivals.dropFirst().reduce(0) { $0 + $1.bits }) / (last.time - first.time) * 1000
    }

    private mutating func mediaTime(_ timestamp: UInt32) -> Double {
        guard firstTimestamp != nil else {
            firstTimestamp = timestamp
            lastTimestamp = timestamp
            return 0
        }
        let step = Int64(Int32(bitPattern: timestamp &- lastTimestamp))
        if step > 0 {
            unwrapped += step
            lastTimestamp = timestamp
        }
        return Double(unwrapped + min(0, step)) / 48
    }

    private mutating func record(transit: Double, at now: Double) {
        transits.append((now, transit))
        if transits.count > 20 { transits.removeFirst() }
        let second = Int(now / 1000)
        if let last = floors.last, last.second == second {
            floors[floors.count - 1].transit = min(last.transit, transit)
        } else {
            floors.append((second, transit))
            floors.removeAll { second - $0.second >= 10 }
        }
    }

    /// The queue on the path now, ms: the fastest of the last ten transits above the fastest of
    /// the last ten seconds. A queue delays every packet; jitter delays some, and among ten
    /// packets one nearly always comes through fast.
    var queue: Double {
        guard let floor = floors.map(\.transit).min(), transits.count >= 10 else { return 0 }
        return transits.suffix(10).map(\.transit).min()! - floor
    }

    /// How fast transits grow: the least-squares slope of the recent ones (ms per ms).
    var trend: Double {
        guard transits.count >= 10, let first = transits.first, let last = transits.last, last.time - first.time >= 200 else { return 0 }
        return Self.slope(transits.map { ($0.time, $0.transit) })
    }

    private mutating func decide(at now: Double) -> Int? {
        // Only a speaker sending steadily is judged (not the comfort-noise frames of a pause).
        guard transits.count >= 10, now - transits[transits.count - 10].time <= 1_000 else { return report(at: now) }
        let queue = queue
        let trend = trend
        let rate = arrivalRate
        // A queue growing fast, or one that stands and is not draining. (Jitter of +-50 ms held
        // in order, as a FIFO path does, gives runs of slow packets: a queue of up to 100 ms
        // rising at up to 0.1 ms per ms.)
        // Either must last a while: a sender whose thread stalled sends a burst that looks, for a
        // packet or two, like a queue.
        risingSince = trend > 0.2 && queue > 25 ? risingSince ?? now : nil
        standingSince = queue > 120 && trend > -0.02 ? standingSince ?? now : nil
        let standing = standingSince.map { now - $0 >= 500 } ?? false
        let overflowing = risingSince.map { now - $0 >= 100 } ?? false || standing
        // While a queue stands the path is busy, so what arrives is what it carries; a speaker
        // sending far less than the estimate (a pause), or far less than when the path last
        // overflowed with a queue that does not stand, cannot be what fills it.
        let explained = rate >= Double(estimate ?? 0) * 0.5 && (standing || rate >= (overflowRate ?? 0) * 0.9)
        if overflowing, rate > 0, explained {
            let cut = Int(rate * 0.85)
            estimate = min(estimate ?? cut, cut)
            overflowRate = rate
            lastDecrease = now
            lastChange = now
            // The next judgement is of transits after the speaker heard of this one.
            transits.removeAll()
            risingSince = nil
            standingSince = nil
        } else if !overflowing, let current = estimate, now - lastChange >= 200 {
            let elapsed = (now - lastChange) / 1000
            lastChange = now
            // Only while the speaker sends near the limit and no queue stands.
            guard queue < 20, rate >= Double(current) * 0.7 else { return report(at: now) }
            let ceiling = (overflowRate ?? .infinity) * 0.9
            if Double(current) < ceiling {
                estimate = Int(min(ceiling, Double(current) * (1 + 0.08 * elapsed)))
            } else if now - lastDecrease > 15_000 {
                estimate = min(1_000_000, current + Int(1_000 * elapsed))
            }
        }
        return report(at: now)
    }

    private mutating func report(at now: Double) -> Int? {
        guard let estimate else { return nil }
        let changed = reported.map { abs(Double(estimate - $0)) >= Double($0) * 0.05 } ?? true
        guard changed || now - lastReport >= 1_000 else { return nil }
        reported = estimate
        lastReport = now
        return estimate
    }
}
