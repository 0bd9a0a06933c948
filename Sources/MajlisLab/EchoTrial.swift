#if os(Linux)
import Foundation
import MajlisAudio
import MajlisKit
import MajlisProtocol

/// The echo test end to end: a client of the SDK on a `LabServer` speaks `speech` into the echo
/// test and records what comes back; how long after it came, and how it sounds.
public enum EchoTrial {
    public struct Figures: Sendable {
        /// From the moment the speech was handed to the microphone to the moment it was played
        /// back, ms (the sample offset at which it best matches), and the playout buffer's depth
        /// at the end, ms.
        public var lag: Double
        public var playout: Double
        /// What came back, lined up with the speech.
        public var heard: [Int16]
        /// How alike the two are, -1...1 (normalized cross-correlation at the lag).
        public var likeness: Double
    }

    public static func run(_ speech: [Int16], delay: Int = 2, server: LabServer) async throws -> Figures {
        let source = ScriptedSource()
        let sink = RecordingSink()
        let media = try LiveMediaEngine(source: source, sink: sink)
        let signaling = LiveSignalingClient(url: server.url, token: server.token("echo"))
        _ = try await signaling.connect()
        let test = EchoTest(signaling: signaling, media: media)
        try await test.start(delay: .seconds(delay))
        let deadline = Date().addingTimeInterval(30)
        while !media.isBound && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let spokenAt = sink.recorded.count
        source.play(speech)
        let enough = spokenAt + speech.count + (delay + 1) * AudioFormat.sampleRate
        let end = Date().addingTimeInterval(Double(speech.count) / Double(AudioFormat.sampleRate) + Double(delay) + 60)
        while sink.recorded.count < enough && Date() < end { try await Task.sleep(for: .milliseconds(50)) }
        let playout = media.statistics.targetDelay
        await test.stop()
        await signaling.disconnect()
        let recorded = Array(sink.recorded[spokenAt...])
        let correlation = SyntheticSound.convolve(recorded, speech.reversed().map(Double.init))
        let peak = correlation.indices.max { correlation[$0] < correlation[$1] } ?? 0
        let start = max(0, peak - (speech.count - 1))
        let heard = Array(recorded[start..<min(recorded.count, start + speech.count)])
        let energy = { (x: [Int16]) in x.reduce(0.0) { $0 + Double($1) * Double($1) } }
        let likeness = (correlation.isEmpty ? 0 : correlation[peak]) / max(1, (energy(speech) * energy(heard)).squareRoot())
        return Figures(lag: Double(peak - (speech.count - 1)) / 48, playout: playout, heard: heard, likeness: likeness)
    }
}
#endif
