#if os(Linux)
import MajlisAudio
import MajlisProtocol
import MajlisTransport

/// What a listener keeps for one speaker it hears: the adaptive jitter buffer, the Opus decoder,
/// which packets to ask for again (NACK) and what arrived in this report interval. Frames come
/// as plain Opus packets or as RED (RFC 2198) packets whose earlier frames fill losses at once.
///
/// Not thread-safe: the engine uses it under its lock (receive) or on its clock thread (play).
final class RemoteSpeaker {
    let ssrc: UInt32
    var buffer = JitterBuffer()
    let decoder: OpusDecoder
    var nack = NackTracker()
    var reception = ReceptionCounter()
    var lastHeard: Double
    var level = 0
    /// Frames recovered from redundancy, and retransmissions that arrived (since start).
    private(set) var recoveredByRedundancy = 0
    private(set) var repaired = 0
    /// Playout slots by what filled them.
    private(set) var slots = (played: 0, recovered: 0, concealed: 0, silent: 0)

    /// `lossyPathRoundTrip`: the listener's own path loses packets and has this round trip, so
    /// playout starts deep enough for a repair.
    init(ssrc: UInt32, now: Double, lossyPathRoundTrip: Double? = nil) throws(AudioError) {
        self.ssrc = ssrc
        decoder = try OpusDecoder()
        lastHeard = now
        if let roundTrip = lossyPathRoundTrip {
            nack = NackTracker(roundTrip: roundTrip)
            lastAsked = now
        }
        nack.holdOff = 10  // for reordering
    }

    /// Takes one RTP packet of this speaker, arrived at `now` (ms).
    func receive(_ rtp: RTPPacket, opusPayloadType: UInt8, redPayloadType: UInt8?, levelExtension: UInt8, now: Double) {
        lastHeard = now
        let voice = rtp.audioLevel(extensionId: levelExtension)
        if let voice { level = Int((Double(127 - Int(voice.level)) / 127 * 100).rounded()) }
        let quiet = voice.map { !$0.voice } ?? false
        let retransmission = nack.received(rtp.sequenceNumber, at: now)
        if retransmission {
            repaired += 1
        } else {
            reception.count(rtp.sequenceNumber, timestamp: rtp.timestamp, arrival: now)
        }
        if rtp.payloadType == opusPayloadType {
            buffer.insert(sequence: rtp.sequenceNumber, timestamp: rtp.timestamp, payload: rtp.payload, quiet: quiet, at: now)
        } else if let redPayloadType, rtp.payloadType == redPayloadType, let red = try? REDPayload(parsing: rtp.payload) {
            var reach = 0
            for block in red.redundant where block.payloadType == opusPayloadType {
                let back = UInt16((Int(block.timestampOffset) + AudioFormat.frameSamples / 2) / AudioFormat.frameSamples)
                guard back > 0 else { continue }
                reach = max(reach, Int(back))
                let sequence = rtp.sequenceNumber &- back
                if buffer.insert(sequence: sequence, timestamp: rtp.timestamp &- UInt32(block.timestampOffset), payload: block.data, at: now) {
                    recoveredByRedundancy += 1
                }
                nack.recovered(sequence)
            }
            // A gap waits for the packets that may still carry a copy before it is asked for.
            nack.redundancyReach = reach
            nack.holdOff = Double(reach * AudioFormat.frameMilliseconds) + 10
            if red.primaryPayloadType == opusPayloadType {
                buffer.insert(sequence: rtp.sequenceNumber, timestamp: rtp.timestamp, payload: red.primary, quiet: quiet, at: now)
            }
        }
    }

    /// When this stream last needed a retransmission.
    private var lastAsked: Double?

    /// The next 20 ms of this speaker, or nil when there is nothing to play.
    func play(at now: Double) -> [Int16]? {
        // While losses need retransmissions, playout waits about as long as one takes (a gap
        // noticed, a round trip, some jitter) from the first one on, rather than lurching later
        // each time the target learns of a slower repair; the rare second try is not waited for.
        let repairing = lastAsked.map { now - $0 < 15_000 } ?? false
        let repair = min(600, nack.roundTrip * 1.25 + 100)
        buffer.minimumDelay = repairing ? repair : 40
        buffer.maximumDelay = repairing ? repair + 150 : 1_000
        switch buffer.pop(at: now) {
        case .waiting:
            slots.silent += 1
            return nil
        case .packet(let payload):
            slots.played += 1
            return try? decoder.decode(payload)
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
        let due = nack.due(at: now, oldestUseful: buffer.nextSequence)
        if !due.isEmpty { lastAsked = now }
        return due
    }
}
#endif
