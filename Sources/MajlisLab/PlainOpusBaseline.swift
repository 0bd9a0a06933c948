import MajlisAudio
import MajlisTransport

/// What plain Opus (no FEC, no redundancy, no retransmission; concealment for every loss)
/// makes of speech over the same two impaired legs: the yardstick Majlis is measured against.
public enum PlainOpusBaseline {
    /// Decoded speech and the fraction of packets lost end to end (either leg dropping it).
    /// `music`: Opus's general audio application (the music profiles), not its voice one.
    public static func run(_ speech: [Int16], impairment: NetworkSimulator.Settings?, bitrate: Int = 32_000, music: Bool = false, seed: UInt64 = 7) throws -> (pcm: [Int16], loss: Double) {
        let encoder = try OpusEncoder(bitrate: bitrate, music: music)
        let decoder = try OpusDecoder()
        func leg(_ salt: UInt64) -> PathImpairment? {
            impairment.map {
                PathImpairment(
                    loss: $0.loss, meanBurst: $0.meanBurst, delay: 0, jitter: 0, reorder: false, seed: seed &+ salt, rate: $0.rate,
                    queueLimit: $0.queue)
            }
        }
        var uplink = leg(1)
        var downlink = leg(2)
        var pcm: [Int16] = []
        var lost = 0
        var frames = 0
        for start in stride(from: 0, to: speech.count, by: AudioFormat.frameSamples) {
            var frame = Array(speech[start..<min(speech.count, start + AudioFormat.frameSamples)])
            frame += [Int16](repeating: 0, count: AudioFormat.frameSamples - frame.count)
            let packet = try encoder.encode(frame)
            let time = Double(frames) * Double(AudioFormat.frameMilliseconds)
            // The downlink sees only what crossed the uplink (each packet with its RTP header).
            let upLost = uplink != nil && uplink?.release(at: time, bytes: packet.count + 12) == nil
            let downLost = !upLost && downlink != nil && downlink?.release(at: time, bytes: packet.count + 12) == nil
            frames += 1
            if upLost || downLost {
                lost += 1
                pcm += try decoder.conceal()
            } else {
                pcm += try decoder.decode(packet)
            }
        }
        return (pcm, Double(lost) / Double(max(1, frames)))
    }
}
