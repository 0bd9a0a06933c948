#if os(Linux)
import Foundation
import MajlisAudio
import MajlisKit
import MajlisTransport

/// Speech from a seated speaker to a listener through a real server, every leg through the
/// network simulator: what the listener's speaker played, and what each side counted.
public struct SpeechTrial: Sendable {
    /// Everything the listener played, from its start (leading silence included).
    public let heard: [Int16]
    /// How long after it was spoken the listener played the speech (best alignment), ms.
    public let mouthToEar: Double?
    public let speaker: LiveMediaEngine.Statistics
    public let listener: LiveMediaEngine.Statistics
    /// Packets the simulator relayed and dropped toward the server and toward clients.
    public let relayed: (up: NetworkSimulator.Counts, down: NetworkSimulator.Counts)?

    /// The share of packets the simulator dropped (both directions, all flows).
    public var networkLoss: Double? {
        guard let relayed else { return nil }
        let up = Double(relayed.up.lost) / Double(max(1, relayed.up.sent + relayed.up.lost))
        let down = Double(relayed.down.lost) / Double(max(1, relayed.down.sent + relayed.down.lost))
        return 1 - (1 - up) * (1 - down)
    }

    /// Runs one trial: the call settles for `warmUp` seconds (long enough for loss reports to
    /// choose the protection), then `speech` is spoken once. With no `warmUp` the call starts
    /// cold: the speaker joins a listener already there and speaks as soon as it is seated.
    public static func run(_ speech: [Int16], impairment: NetworkSimulator.Settings?, warmUp: Double = 3) async throws -> SpeechTrial {
        let server = try LabServer(impairment: impairment)
        defer { server.stop() }
        let source = ScriptedSource()
        let sink = RecordingSink()
        let call = try await LabCall(server: server, source: source, sink: sink, cold: warmUp <= 0)
        try await Task.sleep(for: .milliseconds(Int(warmUp * 1000)))
        source.play(speech)
        // Mouth to ear counts from the speaker's first word: a speaker reads its speech only once
        // its path is bound (a cold call's first second or so), and that wait is no delay of the
        // voice. The recording is as long as what has been played out when that happens.
        let reading = Date().addingTimeInterval(30)
        while source.played == 0, Date() < reading { try await Task.sleep(for: .milliseconds(5)) }
        let start = sink.recorded.count
        while !source.finished { try await Task.sleep(for: .milliseconds(50)) }
        // The tail (buffered audio, late repairs): until the listener has played the speech out,
        // its last second silent after at least the speech's length, however far its buffer grew
        // on a busy machine; at least two seconds, at most twenty.
        try await Task.sleep(for: .milliseconds(2_000))
        let deadline = Date().addingTimeInterval(18)
        while Date() < deadline {
            let heard = sink.recorded
            if heard.count >= start + speech.count + 48_000, LevelMeter.dBov(Array(heard.suffix(48_000))) < -50 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let heard = sink.recorded
        let trial = SpeechTrial(
            heard: heard, mouthToEar: SpeechDelay.milliseconds(spoken: speech, heard: Array(heard[min(start, heard.count)...])),
            speaker: call.speakerMedia.statistics, listener: call.listenerMedia.statistics,
            relayed: server.network?.counted)
        await call.end()
        return trial
    }
}
#endif
