#if os(Linux)
import MajlisAudio
@testable import MajlisKit
import MajlisProtocol
import Testing

/// What a listener does with one speaker's packets, on the listener's clock (no sockets).
@Suite struct RemoteSpeakerTests {
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
                let packet = RTPPacket(
                    payloadType: 111, sequenceNumber: UInt16(index), timestamp: UInt32(index * AudioFormat.frameSamples), ssrc: 7,
                    payload: payload)
                speaker.receive(packet, opusPayloadType: 111, redPayloadType: 63, levelExtension: 1, now: now)
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
}
#endif
