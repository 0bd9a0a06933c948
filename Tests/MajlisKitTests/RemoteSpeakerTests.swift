#if os(Linux)
import MajlisAudio
@testable import MajlisKit
import MajlisProtocol
import MajlisTransport
import Testing

/// What a listener does with one speaker's packets, on the listener's clock (no sockets).
@Suite struct RemoteSpeakerTests {
    /// Hands the speaker (SSRC 7) its `index`th 20 ms Opus packet, arrived at `now`.
    static func deliver(_ index: Int, _ payload: [UInt8], to speaker: RemoteSpeaker, at now: Double) {
        let packet = RTPPacket(
            payloadType: 111, sequenceNumber: UInt16(index), timestamp: UInt32(index * AudioFormat.frameSamples), ssrc: 7, payload: payload)
        speaker.receive(packet, opusPayloadType: 111, redPayloadType: 63, levelExtension: 1, now: now)
    }

    /// On a path too long to wait for retransmissions (600 ms round trip), a new speaker's
    /// playout starts deep enough for such a path's jitter and the farthest redundant copy
    /// before its packets have shown how late they come; once they have (here: all on time),
    /// it follows them down. On a short path it starts at the minimum.
    @Test func aNewSpeakerOnALongPathStartsDeepUntilItsPacketsShowTheWay() throws {
        let encoder = try OpusEncoder()
        var tone = ToneGenerator(frequency: 440, amplitude: 0.3)
        let payloads = try (0..<200).map { _ in try encoder.encode(tone.next()) }
        func targets(roundTrip: Double) throws -> (first: Double, learned: Double) {
            let speaker = try RemoteSpeaker(ssrc: 7, now: 0)
            speaker.pathRoundTrip = roundTrip
            var first: Double?
            for (index, payload) in payloads.enumerated() {
                let now = Double(index * AudioFormat.frameMilliseconds)
                Self.deliver(index, payload, to: speaker, at: now)
                _ = speaker.play(at: now)
                if first == nil { first = speaker.buffer.targetDelay() }
            }
            return (first ?? 0, speaker.buffer.targetDelay())
        }
        let long = try targets(roundTrip: 600)
        #expect(long.first >= 240, "started at \(long.first) ms")
        #expect(long.learned <= 60, "still at \(long.learned) ms after four seconds on time")
        let short = try targets(roundTrip: 80)
        #expect(short.first <= 60, "a short path starts at \(short.first) ms")
    }

    /// Packets sent before a listener started to hear a speaker (the server's repairs of the
    /// speaker's uplink, forwarded to every listener) arrive as late as the repair made them:
    /// that is not this listener's path, and playout does not learn from it.
    @Test func packetsFromBeforeTheFirstOneHeardDoNotDeepenPlayout() throws {
        let encoder = try OpusEncoder()
        var tone = ToneGenerator(frequency: 440, amplitude: 0.3)
        let payloads = try (0..<220).map { _ in try encoder.encode(tone.next()) }
        let speaker = try RemoteSpeaker(ssrc: 7, now: 0)
        speaker.pathRoundTrip = 600
        for index in 20..<220 {
            let now = Double(index * AudioFormat.frameMilliseconds)
            Self.deliver(index, payloads[index], to: speaker, at: now)
            if index == 30 {
                // Packets 10-15, repaired on the speaker's uplink, 600 ms late.
                for old in 10..<16 { Self.deliver(old, payloads[old], to: speaker, at: now) }
            }
            _ = speaker.play(at: now)
        }
        #expect(speaker.buffer.targetDelay() <= 60, "playout at \(speaker.buffer.targetDelay()) ms after four seconds on time")
    }

    /// Reordering is not loss and jitter is not congestion: a lossless path that delays each
    /// packet on its own (40 +- 20 ms, one in eight overtaking the one before) makes a listener
    /// ask for nothing once the stream has shown how far its packets overtake, and playout stays
    /// at the depth the jitter needs, concealing nothing: asks a packet answered itself do not
    /// make it wait for repairs, and the room a new call leaves for them (`lossyPathRoundTrip`)
    /// is taken back once two seconds lost nothing (in a pause, as playout is always moved).
    @Test(arguments: [nil, 80.0]) func reorderedAndJitteredArrivalsAreNeitherLossNorAReasonToWait(hint: Double?) throws {
        let encoder = try OpusEncoder()
        var tone = ToneGenerator(frequency: 440, amplitude: 0.3)
        let payloads = try (0..<600).map { _ in try encoder.encode(tone.next()) }
        let speaker = try RemoteSpeaker(ssrc: 7, now: 0, lossyPathRoundTrip: hint)
        speaker.pathRoundTrip = 80
        var path = PathImpairment(loss: 0, meanBurst: 1, delay: 40, jitter: 20, reorder: true, seed: 6)
        // Speech with a second's pause in the middle (packets marked quiet).
        let arrivals = (0..<600).map { index in (index, path.release(at: Double(index * AudioFormat.frameMilliseconds))!) }.sorted { $0.1 < $1.1 }
        var iterator = arrivals.makeIterator()
        var pending = iterator.next()
        var asked = 0
        var concealed = (before: 0, after: 0)
        for tick in 0..<640 {
            let now = Double(tick * AudioFormat.frameMilliseconds) + 7
            while let (index, at) = pending, at <= now {
                let quiet = (250..<300).contains(index)
                let packet = RTPPacket(
                    payloadType: 111, sequenceNumber: UInt16(index), timestamp: UInt32(index * AudioFormat.frameSamples), ssrc: 7,
                    extensions: [RTPPacket.audioLevelExtension(id: 1, voice: !quiet, level: quiet ? 127 : 30)], payload: payloads[index])
                speaker.receive(packet, opusPayloadType: 111, redPayloadType: 63, levelExtension: 1, now: at)
                pending = iterator.next()
            }
            let due = speaker.dueNacks(at: now)
            if now >= 2_000 { asked += due.count }
            _ = speaker.play(at: now)
            if tick == 350 { concealed.before = speaker.slots.concealed }
            if tick == 590 { concealed.after = speaker.slots.concealed }  // before the stream ends
        }
        #expect(asked == 0, "asked for \(asked) packets after the first two seconds")
        #expect(concealed.after == concealed.before, "concealed \(concealed.after - concealed.before) slots of the second sentence")
        #expect(speaker.buffer.targetDelay() <= 70, "playout at \(speaker.buffer.targetDelay()) ms above the fastest packet")
    }

    /// Room for a repair's second try (an ask or its answer lost too) is left from a stream's
    /// first packet until two seconds of them show how often it loses, so a first burst does
    /// not deepen playout mid-sentence; from then on it is kept only where tries fail often
    /// enough to need it: on a stream that lost a burst, not on one losing a packet in a
    /// hundred (where it cost more than it saved) nor on a clean one, where the room for the
    /// first repair goes too until a repair is needed.
    @Test func roomForASecondTryUntilLossIsKnownThenOnlyWhereItIsFrequent() throws {
        let encoder = try OpusEncoder()
        var tone = ToneGenerator(frequency: 440, amplitude: 0.3)
        let payloads = try (0..<140).map { _ in try encoder.encode(tone.next()) }
        func minimums(losing lost: Set<Int>) throws -> (first: Double, last: Double, deepened: Bool) {
            // A new call: playout waits for repairs at an 80 ms round trip.
            let speaker = try RemoteSpeaker(ssrc: 7, now: 0, lossyPathRoundTrip: 80)
            var seen: [Double] = []
            for (index, payload) in payloads.enumerated() {
                let now = Double(index * AudioFormat.frameMilliseconds)
                if !lost.contains(index) { Self.deliver(index, payload, to: speaker, at: now) }
                _ = speaker.play(at: now)
                seen.append(speaker.buffer.minimumDelay)
            }
            return (seen[0], seen[seen.count - 1], zip(seen, seen.dropFirst()).contains { $1 > $0 })
        }
        let repair = 80 * 1.25 + 100
        let clean = try minimums(losing: [])
        #expect(clean.first == repair + RemoteSpeaker.secondTry, "nothing known yet")
        // Two seconds that lost (next to) nothing and asked for nothing give the room back.
        #expect(clean.last == 40 && !clean.deepened)
        let rare = try minimums(losing: [100])
        #expect(rare.last == 40 && !rare.deepened, "one packet in a hundred, not asked for")
        let burst = try minimums(losing: Set(5..<15))
        #expect(burst.last == repair + RemoteSpeaker.secondTry && !burst.deepened, "a burst at the start")
    }

    /// After 30 s on time, fourteen packets held up 280 ms in the middle of a sentence arrive
    /// together (too rare to raise the target): playout, behind by then, drains the backlog
    /// beyond 200 ms by playing speech a pitch period shorter at a time, in whole 20 ms frames
    /// to the output, with the pitch kept.
    @Test func playoutBehindItsTargetCatchesUpMidSentence() throws {
        let encoder = try OpusEncoder()
        var tone = ToneGenerator(frequency: 200, amplitude: 0.3)
        let payloads = try (0..<1_700).map { _ in try encoder.encode(tone.next()) }
        let speaker = try RemoteSpeaker(ssrc: 7, now: 0)
        var output: [Int16] = []
        var depthAfterBurst = 0
        let held = 1_500..<1_514  // arrive with 1,514
        for tick in 0..<1_700 {
            let now = Double(tick * AudioFormat.frameMilliseconds)
            // Packet i is sent at 20 i ms and takes 20 ms, except the held ones.
            for index in tick == held.upperBound + 1 ? Array(held) + [tick - 1] : held.contains(tick - 1) || tick == 0 ? [] : [tick - 1] {
                Self.deliver(index, payloads[index], to: speaker, at: now)
            }
            if let pcm = speaker.play(at: now) {
                #expect(pcm.count == AudioFormat.frameSamples)
                output += pcm
            }
            if tick == held.upperBound + 1 { depthAfterBurst = speaker.buffer.depth }
        }
        #expect(depthAfterBurst >= 12, "\(depthAfterBurst) frames waited after the burst")
        #expect(speaker.paced.faster >= 4, "\(speaker.paced.faster) frames played shorter")
        #expect(speaker.buffer.depth <= depthAfterBurst - 2, "\(speaker.buffer.depth) frames still wait")
        #expect(ToneDetector.strongest(of: [150, 200, 250], in: Array(output.suffix(48_000))) == 200)
    }
}
#endif
