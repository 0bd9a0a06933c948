#if canImport(MajlisAudio)
import MajlisAudio
import MajlisProtocol
import MajlisTransport

/// What a listener keeps for one speaker it hears: the adaptive jitter buffer, the Opus decoder,
/// which packets to ask for again (NACK) and what arrived in this report interval. Frames come
/// as plain Opus packets or as RED (RFC 2198) packets whose earlier frames fill losses at once;
/// a packet of several 20 ms frames (a sender on a thin link) is split into them.
///
/// Not thread-safe: the engine uses it under its lock (receive) or on its clock thread (play).
final class RemoteSpeaker {
    let ssrc: UInt32
    var buffer = JitterBuffer()
    private(set) var decoder: OpusDecoder
    /// 2 once the speaker sent a stereo packet (stereo music): from then on it plays in stereo.
    var channels: Int { decoder.channels }
    var nack = NackTracker()
    var reception = ReceptionCounter()
    /// The share of this speaker's packets lost on the way to this listener in the last report
    /// interval (before repair).
    var recentLoss = 0.0
    var lastHeard: Double
    var level = 0
    /// Frames recovered from redundancy, and retransmissions that arrived (since start).
    private(set) var recoveredByRedundancy = 0
    private(set) var repaired = 0
    /// Playout slots by what filled them.
    private(set) var slots = (played: 0, recovered: 0, concealed: 0, silent: 0)

    /// `lossyPathRoundTrip`: the listener's own path loses packets (or may: nothing is known of
    /// it yet) and has this round trip, so playout starts deep enough for a repair, for as long
    /// as after a repair that was needed.
    init(ssrc: UInt32, now: Double, lossyPathRoundTrip: Double? = nil) throws(AudioError) {
        self.ssrc = ssrc
        decoder = try OpusDecoder()
        lastHeard = now
        if let roundTrip = lossyPathRoundTrip {
            nack = NackTracker(roundTrip: roundTrip)
            neededRepair = now
            hintedAt = now
        }
        nack.holdOff = 10  // for reordering
        nack.learnsReordering = true
    }

    /// Takes one RTP packet of this speaker, arrived at `now` (ms).
    func receive(_ rtp: RTPPacket, opusPayloadType: UInt8, redPayloadType: UInt8?, levelExtension: UInt8, now: Double) {
        lastHeard = now
        let voice = rtp.audioLevel(extensionId: levelExtension)
        if let voice { level = Int((Double(127 - Int(voice.level)) / 127 * 100).rounded()) }
        let quiet = voice.map { !$0.voice } ?? false
        // An answer to an ask crosses the path both ways: what fills a gap sooner is its own
        // packet, overtaken on the way.
        nack.minimumAnswerTime = (pathRoundTrip ?? 0) * 0.4
        let waited = nack.noticed(rtp.sequenceNumber).map { now - $0 } ?? 0
        let retransmission = nack.received(rtp.sequenceNumber, at: now, flowing: voice?.voice)
        if let asked = pendingAsks.removeValue(forKey: rtp.sequenceNumber), retransmission {
            neededRepair = max(neededRepair ?? asked, asked)
        }
        if retransmission {
            repaired += 1
        } else {
            reception.count(rtp.sequenceNumber, timestamp: rtp.timestamp, arrival: now)
        }
        // A packet 400 ms of media behind the newest, or filling a gap noticed over 250 ms ago
        // (more than jitter reorders), was repaired: the server's retransmission from the
        // speaker reaches a listener unasked, and in a pause (DTX) the newest is not far ahead.
        // On a path too long to wait for repairs, neither it nor the listener's own
        // retransmissions teach playout how late to play.
        let behind = newestTimestamp.map { Int(Int32(bitPattern: $0 &- rtp.timestamp)) } ?? -1
        if behind < 0 { newestTimestamp = rtp.timestamp }
        // Nor there does a packet older than the first one heard (its gap was never noticed):
        // the server's repair of the speaker's uplink, forwarded to every listener. One such
        // packet, sent before this listener was bound and 600 ms late among a pause's few
        // samples, set playout 400 ms deeper for the next sentence (PESQ 1.6).
        let first = firstTimestamp ?? rtp.timestamp
        firstTimestamp = first
        let beforeFirst = Int32(bitPattern: rtp.timestamp &- first) < 0
        let measured = waitsForRepairs || !(retransmission || beforeFirst || behind >= 20 * AudioFormat.frameSamples || waited > 250)
        // Nor there does one packet far later than all others and not known as a repair count
        // in full: the server's retransmission of a quiet frame lost on the speaker's uplink
        // came 1.8 s late as the newest packet of a pause and set playout 760 ms deeper for
        // the first sentence (PESQ 1.9). A path that really got slower is followed in steps.
        buffer.largestStep = waitsForRepairs ? nil : Self.longPathStep
        // A repair: asked for and answered, or a gap filled long after it showed (the server's
        // repair of the speaker's uplink, which reaches a listener unasked).
        let repair = retransmission || waited > 100
        if rtp.payloadType == opusPayloadType {
            let frames = Self.frames(rtp.payload)
            if !retransmission { nack.packetInterval = Double(frames.count * AudioFormat.frameMilliseconds) }
            buffer.insert(sequence: rtp.sequenceNumber, timestamp: rtp.timestamp, frames: frames, quiet: quiet, measured: measured, repair: repair, at: now)
        } else if let redPayloadType, rtp.payloadType == redPayloadType, let red = try? REDPayload(parsing: rtp.payload) {
            var reach = 0
            let primary = Self.frames(red.primary)
            if !retransmission { nack.packetInterval = Double(primary.count * AudioFormat.frameMilliseconds) }
            let packetSamples = AudioFormat.frameSamples * primary.count
            for block in red.redundant where block.payloadType == opusPayloadType {
                let back = UInt16((Int(block.timestampOffset) + packetSamples / 2) / packetSamples)
                guard back > 0 else { continue }
                reach = max(reach, Int(back))
                let sequence = rtp.sequenceNumber &- back
                if buffer.insert(sequence: sequence, timestamp: rtp.timestamp &- UInt32(block.timestampOffset), frames: Self.frames(block.data), measured: measured && waitsForRepairs, at: now) {
                    recoveredByRedundancy += 1
                }
                nack.recovered(sequence)
            }
            // A gap waits for the packets that may still carry a copy before it is asked for.
            nack.redundancyReach = reach
            nack.holdOff = Double(reach * AudioFormat.frameMilliseconds) + 10
            if red.primaryPayloadType == opusPayloadType {
                buffer.insert(sequence: rtp.sequenceNumber, timestamp: rtp.timestamp, frames: primary, quiet: quiet, measured: measured, repair: repair, at: now)
            }
        }
    }

    /// The 20 ms frames of an Opus payload (what cannot be split is kept whole for the decoder
    /// to judge).
    static func frames(_ payload: [UInt8]) -> [[UInt8]] {
        OpusFrames.split(payload) ?? [payload]
    }

    /// The listener's round trip to the server as the engine measures it (bindings): a repair
    /// takes at least that, even before any has come back.
    var pathRoundTrip: Double?
    /// The newest RTP timestamp received.
    private var newestTimestamp: UInt32?
    /// The RTP timestamp of the first packet received.
    private var firstTimestamp: UInt32?
    /// When this stream last needed a retransmission: an ask answered by a retransmission or
    /// by nothing (the packet was lost), or the start of a call on a path that may lose.
    private var neededRepair: Double?
    /// Asks not yet settled (by sequence number, when asked): one the packet itself answers,
    /// overtaken on the way, was needless, and does not make playout wait for repairs.
    private var pendingAsks: [UInt16: Double] = [:]
    /// When the call's start gave this stream room for repairs before anything was known.
    private var hintedAt: Double?
    /// When this stream last needed (or may have needed) a retransmission.
    private var lastAsked: Double? {
        guard let pending = pendingAsks.values.max() else { return neededRepair }
        return max(pending, neededRepair ?? pending)
    }
    /// How long a retransmission takes (a gap noticed, a round trip, some jitter), and whether
    /// it is short enough to wait for (450 ms at most).
    private var repair: Double { max(nack.roundTrip, pathRoundTrip ?? 0) * 1.25 + 100 }
    private var waitsForRepairs: Bool { repair <= 450 }

    /// Room for a repair's second try above the first, milliseconds: as deep as playout goes
    /// while it waits for repairs.
    static let secondTry = 150.0
    /// The share of a stream's packets lost (so far) from which playout leaves that room.
    static let lossForSecondTry = 0.05

    /// How far above playout's target one frame's lateness counts on a long path, milliseconds.
    static let longPathStep = 150.0
    /// A round trip (ms) below which the server is nearby: a repair there takes no time worth
    /// leaving room for before one is needed.
    static let nearbyRoundTrip = 20.0

    /// Packets of a stream after which its share lost says whether a second try needs room.
    static let packetsToJudgeLoss = 100

    /// Frames whose lateness a buffer must have seen (three seconds of speech) before it alone
    /// sets how late playout on a long path starts.
    static let samplesToLearn = 150

    /// Where playout on a long path starts before this speaker's packets have shown how late
    /// they come: room for the farthest redundant copy (4 frames), half a frame, and a quarter
    /// of the round trip for jitter. Speech that starts as playout still learns the path is
    /// otherwise stretched mid-word while its target climbs (at 300 +- 50 ms each way it went
    /// from 60 to 210 ms in the first second of speech).
    private var longPathStart: Double { Double(4 * AudioFormat.frameMilliseconds) + 10 + (pathRoundTrip ?? 0) / 4 }

    /// Decoded samples left over from a frame that playout made longer (see `JitterBuffer.pace`).
    private var pending: [Int16] = []
    /// Frames made shorter and longer to bring playout to its target in speech (since start).
    private(set) var paced = (faster: 0, slower: 0)

    /// The next 20 ms of this speaker, or nil when there is nothing to play.
    func play(at now: Double) -> [Int16]? {
        var output = pending
        pending = []
        // A frame made shorter leaves room for part of the next; one made longer leaves its end
        // for the next 20 ms (so the buffer is asked for a frame at the time it starts to play).
        while output.count < AudioFormat.frameSamples * channels {
            let before = channels
            guard let frame = slot(at: now + Double(output.count / channels) * 1000 / Double(AudioFormat.sampleRate)) else { break }
            // Turned stereo: what was mono of this frame is left out.
            output = before == channels ? output + frame : frame
        }
        if output.isEmpty { return nil }
        let length = AudioFormat.frameSamples * channels
        if output.count < length {
            output += [Int16](repeating: 0, count: length - output.count)
        } else if output.count > length {
            pending = Array(output[length...])
            output.removeLast(output.count - length)
        }
        return output
    }

    /// One slot's samples (20 ms, or a pitch period more or less), or nil for silence.
    private func slot(at now: Double) -> [Int16]? {
        // While losses need retransmissions, playout waits about as long as one takes (a gap
        // noticed, a round trip, some jitter) from the first one on, rather than lurching later
        // each time the target learns of a slower repair; the rare second try is not waited for.
        // On a long path (a repair taking over 450 ms) waiting would make the conversation lag
        // by that much: there playout waits only for the network's jitter and redundant copies.
        let repairing = waitsForRepairs && lastAsked.map { now - $0 < 15_000 } ?? false
        // Until a stream that loses packets often has shown how late its repairs come, playout
        // leaves room for a second try too (an ask or its answer lost as well): starting at one
        // repair and learning of slower ones mid-sentence stretched a new speaker's first words
        // (10% bursty loss, speech from the moment the seat is taken: 2.75 -> 3.33, median of
        // nine). Where tries rarely fail (under 5% lost), the room is not worth keeping: at 2%
        // loss on each leg, keeping it took 4.00 to 3.33 (median of three). How often a stream
        // loses is known only after two seconds of its packets: until then the room is left
        // (and given back in a pause if the stream turns out clean), as deepening in speech at
        // the first burst stretched 17 frames of a first sentence (PESQ 2.4).
        let lossKnown = reception.expectedSoFar >= Self.packetsToJudgeLoss
        // Room given at a call's start is taken back once two seconds of the stream lost
        // nothing (a packet still on its way may count as lost then) and needed no repair; it
        // is given back in a pause, as playout always is.
        if let hinted = hintedAt, lossKnown {
            if (reception.lossSoFar ?? 0) < 0.02, neededRepair == hinted { neededRepair = nil }
            hintedAt = nil
        }
        // On a stream that goes on losing that often, the room stays: given back once playout
        // had learned the path, it was taken again at the next slow repair, in speech (at 10%
        // random loss on each leg: 3.39 -> 3.98 PESQ, median of 30 seeds on virtual time, for
        // 75 ms more mouth to ear). Not from a speaker that packs frames several to a packet:
        // it is on a thin uplink, whose losses are its queue overflowing, and there the room
        // only added delay (40 kb/s: 3.23 -> 3.05, and over the 400 ms goal).
        let lossy = (reception.lossSoFar ?? 0) >= Self.lossForSecondTry
        let thinUplink = nack.packetInterval > Double(AudioFormat.frameMilliseconds)
        let secondTryRoom = lossKnown ? lossy && (buffer.samples < Self.samplesToLearn || !thinUplink) : buffer.samples < Self.samplesToLearn
        buffer.minimumDelay = repairing ? repair + (secondTryRoom ? Self.secondTry : 0) : (waitsForRepairs || buffer.samples >= Self.samplesToLearn ? 40 : longPathStart)
        // There redundant copies are the repair, and a frame rebuilt from one plays up to the
        // farthest copy's distance after its packet would have: playout leaves that room from
        // the first word (from the loss seen, in a pause before anything carried a copy), and
        // copies do not teach the target their lateness twice.
        let reach = waitsForRepairs ? 0 : max(nack.redundancyReach, recentLoss >= 0.08 ? 4 : recentLoss >= 0.03 ? 1 : 0)
        buffer.redundancyDelay = Double(reach * AudioFormat.frameMilliseconds)
        buffer.maximumDelay = repairing ? repair + Self.secondTry : 1_000
        switch buffer.pop(at: now) {
        case .waiting:
            slots.silent += 1
            // A speaker pausing with DTX sends a frame now and then: the decoder fills the gaps
            // with comfort noise (its concealment) rather than dead air.
            guard buffer.inPause, now - lastHeard < 1_000 else { return nil }
            return try? decoder.conceal()
        case .packet(let payload):
            slots.played += 1
            // Opus's stereo flag (RFC 6716, the TOC byte): a speaker sending stereo is played so.
            if decoder.channels == 1, let toc = payload.first, toc & 0x04 != 0, let stereo = try? OpusDecoder(channels: 2) {
                decoder = stereo
                pending = []
            }
            guard let pcm = try? decoder.decode(payload) else { return nil }
            switch buffer.pace {
            case .normal:
                return pcm
            case .faster:
                guard let shorter = TimeStretcher.accelerate(pcm, channels: channels) else { return pcm }
                paced.faster += 1
                return shorter
            case .slower:
                guard let longer = TimeStretcher.stretch(pcm, channels: channels) else { return pcm }
                paced.slower += 1
                return longer
            }
        case .recover(let next):
            slots.recovered += 1
            return try? decoder.recover(from: next)
        case .conceal:
            slots.concealed += 1
            return try? decoder.conceal()
        }
    }

    /// The sequence numbers to ask for again now.
    func dueNacks(at now: Double) -> [UInt16] {
        // Where this speaker's packets are lost often (10% or more), losses come in bursts and
        // asks and answers are lost too: a burst is asked for while it lasts (see
        // NackTracker.markOverdue) and each first ask is made twice. Below that a stall is more
        // likely a queue than a burst, and asking would only keep playout waiting for repairs.
        let lossy = recentLoss >= 0.1
        nack.echoDelay = lossy ? 50 : nil
        if lossy { nack.markOverdue(at: now, grace: max(60, 4 * reception.jitter)) }
        let due = nack.due(at: now, oldestUseful: buffer.nextSequence)
        for (sequence, asked) in pendingAsks where now - asked > 1_000 {
            // Nothing came for it: it was lost.
            pendingAsks[sequence] = nil
            neededRepair = max(neededRepair ?? asked, asked)
        }
        for sequence in due where pendingAsks[sequence] == nil { pendingAsks[sequence] = now }
        return due
    }
}
#endif
