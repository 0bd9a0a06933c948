/// The receiving side of RFC 4585 generic NACK for one stream: which sequence numbers are
/// missing, which to ask for now (at once, then again once a round trip has passed without an
/// answer, a few times), and the round trip learned from how long answers take.
///
/// Pure: time comes in as milliseconds on any monotonic clock.
public struct NackTracker: Sendable {
    private struct Missing: Sendable {
        var noticed: Double
        var lastAsked: Double?
        var firstAsked: Double?
        var asks = 0
        /// Marked overdue (the stream stopped mid-speech), not seen missing behind a later packet.
        var overdue = false
        /// When the first ask is asked again (see `echoDelay`).
        var echoAt: Double?
    }

    /// How many times one packet is asked for.
    public var maxAsks = 3
    /// Gaps wider than this are not asked for (the stream restarted or was cut).
    public var maxGap = 48
    /// How many packets after a lost one may still carry a copy of it (the largest RED
    /// distance): a gap is asked for once a packet that far ahead arrived, or after `holdOff`
    /// milliseconds, whichever is first.
    public var redundancyReach = 0
    public var holdOff: Double = 0
    /// When set, each first ask is made again this many milliseconds later: a lossy path loses
    /// the ask or its answer about as often as the packet, and a second try a round trip later
    /// comes too late to play. (A sender answers one ask per round trip, so the echo costs a
    /// second answer only where the answer may be sent twice, as the server's to a listener.)
    public var echoDelay: Double?
    /// The smoothed round trip in milliseconds (a first guess until answers arrive).
    public private(set) var roundTrip: Double = 200
    private var highest: UInt16?
    private var missing: [UInt16: Missing] = [:]
    /// When the newest packet arrived.
    private var newestArrival: Double?
    /// The newest sequence number marked overdue (beyond `highest`).
    private var overdueThrough: UInt16?
    /// Whether more packets are sure to follow the newest (it carried voice: a speaker pausing
    /// sends quiet frames first).
    public private(set) var isFlowing = false
    /// How often the stream sends a packet, milliseconds (a sender on a thin link puts several
    /// 20 ms frames in one); the caller sets it from what the packets carry.
    public var packetInterval: Double = 20
    /// When each of the last 256 gaps was noticed, kept after it is given up (slot = sequence %
    /// 256): how long a packet that fills one kept its receiver waiting.
    private var noticedRing = [(sequence: UInt16, at: Double)](repeating: (0, -.infinity), count: 256)

    /// The shortest time an answer to an ask can take, milliseconds (its owner sets it from
    /// the path's round trip; 0: unknown): a missing packet that arrives sooner after its ask
    /// is the packet itself, reordered, not a retransmission.
    public var minimumAnswerTime: Double = 0

    /// Whether gaps wait for reordering before they are asked for (`reorderWait`). (A listener
    /// also gets frames the server rebuilt from redundancy unasked, and takes one for
    /// reordering when the packet that carried its copy was lost too; those are a small share
    /// of the gaps of a stream that loses, so they do not make it wait.)
    public var learnsReordering = false

    /// How long gaps were filled by their own packets, overtaken on the way (when, and how
    /// long after the gap showed), over the last ten seconds.
    private var reorderings: [(at: Double, delay: Double)] = []

    /// When gaps showed in the last ten seconds (while `learnsReordering`).
    private var gapTimes: [Double] = []

    /// How long a gap waits before it is asked for, milliseconds: the longest that packets of
    /// this stream came late behind later ones in the last ten seconds, and 5 ms more, at most
    /// 100; 0 on a path that keeps packets in order. Without it every packet a path reorders
    /// (Wi-Fi retries, multipath, a cellular scheduler) is asked for and sent twice. Only while at
    /// least two thirds of the gaps were reordering: where more are losses, a repair asked for later
    /// comes too late more often than a needless one costs (at 40% loss, waiting took the
    /// median call from 2.96 to 2.60 PESQ).
    public private(set) var reorderWait: Double = 0

    private mutating func noteReordering(_ delay: Double, at now: Double) {
        reorderings.append((now, delay))
        if reorderings.count > 512 { reorderings.removeFirst() }
        judgeReordering(at: now)
    }

    /// Forgets what is over ten seconds old and judges `reorderWait` again.
    private mutating func judgeReordering(at now: Double) {
        reorderings.removeAll { now - $0.at > 10_000 }
        gapTimes.removeAll { now - $0 > 10_000 }
        let mostlyReordering = !reorderings.isEmpty && reorderings.count * 3 >= gapTimes.count * 2
        reorderWait = mostlyReordering ? min(100, reorderings.map(\.delay).max()! + 5) : 0
    }

    /// Whether something `judgeReordering` counts is over ten seconds old.
    private func reorderingIsStale(at now: Double) -> Bool {
        (reorderings.first.map { now - $0.at > 10_000 } ?? false) || (gapTimes.first.map { now - $0 > 10_000 } ?? false)
    }

    /// `roundTrip`: a first guess in milliseconds, until answers measure it.
    public init(roundTrip: Double = 200) { self.roundTrip = roundTrip }

    /// How long to wait for an answer before asking again.
    public var retryInterval: Double { max(40, roundTrip * 1.25 + 10) }

    /// How many packets are missing now.
    public var missingCount: Int { missing.count }

    /// Notes the arrival of `sequence`; returns true when it answers a request (a retransmission).
    /// `flowing`: whether the packet carried voice, so that more must follow it (nil: unknown,
    /// taken as no).
    @discardableResult
    public mutating func received(_ sequence: UInt16, at now: Double, flowing: Bool? = nil) -> Bool {
        guard let top = highest else {
            highest = sequence
            newestArrival = now
            isFlowing = flowing ?? false
            return false
        }
        let ahead = Int(Int16(bitPattern: sequence &- top))
        if ahead > 0 {
            if ahead - 1 > maxGap {
                missing = [:]
            } else {
                if learnsReordering, ahead > 1 {
                    gapTimes.append(now)
                    if gapTimes.count > 512 { gapTimes.removeFirst() }
                    if reorderWait > 0 { judgeReordering(at: now) }
                }
                for step in 1..<ahead where missing[top &+ UInt16(step)] == nil {
                    missing[top &+ UInt16(step)] = Missing(noticed: now)
                    noticedRing[Int(top &+ UInt16(step)) % 256] = (top &+ UInt16(step), now)
                }
            }
            highest = sequence
            newestArrival = now
            isFlowing = flowing ?? false
            if let through = overdueThrough, Int16(bitPattern: through &- sequence) <= 0 { overdueThrough = nil }
            // Asked for while overdue: the answer, or the packet itself late; which one is not
            // known, so it teaches no round trip.
            return missing.removeValue(forKey: sequence)?.lastAsked != nil
        }
        guard let entry = missing.removeValue(forKey: sequence) else { return false }
        guard let asked = entry.lastAsked else {
            // Reordered before anyone asked: how long packets overtake each other here.
            if learnsReordering, !entry.overdue { noteReordering(now - entry.noticed, at: now) }
            return false
        }
        // Sooner than an answer can come: the packet itself, overtaken on the way by later
        // ones for longer than the wait before asking (a path that reorders), not a repair. Taken
        // for one, it was left out of the loss count as a retransmission: at 10% loss with
        // packets delayed independently (+-20 ms), listeners and the server reported a quarter
        // of packets lost, and speakers sent 24 kb/s instead of 32.
        if now - asked < minimumAnswerTime, !entry.overdue {
            // (Or the answer to an earlier ask: no round trip to learn from either way.) Sooner
            // than an answer to the first ask could come, it was reordering.
            if learnsReordering, now - (entry.firstAsked ?? asked) < minimumAnswerTime { noteReordering(now - entry.noticed, at: now) }
            return false
        }
        guard !entry.overdue else { return true }
        let sample = max(1, now - asked)
        roundTrip = entry.asks == 1 ? roundTrip * 0.8 + sample * 0.2 : min(roundTrip, roundTrip * 0.8 + sample * 0.2)
        return true
    }

    /// A burst of losses shows only when it ends, by the packet after it: while a stream that
    /// was flowing has sent nothing for over `grace` milliseconds past when its next packet was
    /// due (one every `packetInterval`), the packets it must have sent since are marked missing,
    /// so they are asked for while the burst lasts. At most `limit` past the newest packet.
    public mutating func markOverdue(at now: Double, grace: Double, limit: Int = 12) {
        guard isFlowing, let top = highest, let arrival = newestArrival else { return }
        let due = min(limit, Int(((now - arrival - grace) / packetInterval).rounded(.down)))
        let marked = overdueThrough.map { Int(Int16(bitPattern: $0 &- top)) } ?? 0
        guard due > marked else { return }
        for step in (marked + 1)...due where missing[top &+ UInt16(step)] == nil {
            let sequence = top &+ UInt16(step)
            missing[sequence] = Missing(noticed: now, overdue: true)
            noticedRing[Int(sequence) % 256] = (sequence, now)
        }
        overdueThrough = top &+ UInt16(due)
    }

    /// When the gap `sequence` fills was noticed (even if since given up), if it is one of the
    /// last 256 gaps.
    public func noticed(_ sequence: UInt16) -> Double? {
        let entry = noticedRing[Int(sequence) % 256]
        return entry.sequence == sequence && entry.at > -.infinity ? entry.at : nil
    }

    /// Whether `sequence` is missing (noticed and not yet given up).
    public func isMissing(_ sequence: UInt16) -> Bool { missing[sequence] != nil }

    /// `sequence` was obtained another way (redundancy): stop asking for it.
    public mutating func recovered(_ sequence: UInt16) {
        missing[sequence] = nil
    }

    /// Gives up the packets strictly between `low` and `high` (a gap that cannot be real:
    /// nothing is asked for or rebuilt in it).
    public mutating func giveUp(between low: UInt16, and high: UInt16) {
        let steps = Int(Int16(bitPattern: high &- low))
        guard steps > 1 else { return }
        for step in 1..<min(steps, maxGap + 1) { missing[low &+ UInt16(step)] = nil }
    }

    /// The sequence numbers to ask for now, oldest first. Packets older than `oldestUseful` (the
    /// next one the player needs) are given up.
    public mutating func due(at now: Double, oldestUseful: UInt16? = nil) -> [UInt16] {
        guard let top = highest else { return [] }
        if reorderingIsStale(at: now) { judgeReordering(at: now) }
        var ask: [UInt16] = []
        let interval = retryInterval
        for (sequence, entry) in missing {
            let tooOld = oldestUseful.map { Int16(bitPattern: sequence &- $0) < 0 } ?? false
            let stale = Int(Int16(bitPattern: top &- sequence)) > maxGap * 2
            let exhausted = entry.asks >= maxAsks && now - (entry.lastAsked ?? now) >= interval
            if tooOld || stale || exhausted {
                missing[sequence] = nil
                continue
            }
            // An overdue packet is asked for at once: nothing is coming that could carry a copy.
            let waited = now - entry.noticed
            let firstAskDue =
                entry.overdue || (Int(Int16(bitPattern: top &- sequence)) >= redundancyReach && waited >= reorderWait) || waited >= max(holdOff, reorderWait)
            if entry.asks < maxAsks, entry.lastAsked.map({ now - $0 >= interval }) ?? firstAskDue {
                missing[sequence] = Missing(
                    noticed: entry.noticed, lastAsked: now, firstAsked: entry.firstAsked ?? now, asks: entry.asks + 1, overdue: entry.overdue,
                    echoAt: entry.asks == 0 ? echoDelay.map { now + $0 } : nil)
                ask.append(sequence)
            } else if let echo = entry.echoAt, now >= echo {
                missing[sequence]?.echoAt = nil
                ask.append(sequence)
            }
        }
        return ask.sorted { Int16(bitPattern: $0 &- $1) < 0 }
    }
}
