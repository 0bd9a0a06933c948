import Foundation
import MajlisAudio
import MajlisKit
import MajlisLab
import MajlisTransport
import Testing

/// The SDK and server on impaired networks (`NetworkSimulator` on every leg), judged by what a
/// listener actually plays.
@Suite(.serialized) struct WeakNetworkTests {
    /// At 20% random loss on each leg (36% end to end), speech through Majlis scores at least
    /// twice what plain Opus with concealment makes of the same loss (PESQ-WB).
    @Test func speechSurvivesTwentyPercentLossOnEachLeg() async throws {
        let speech = try SpeechSample.make()
        let impairment = NetworkSimulator.Settings(loss: 0.2, delay: 40, jitter: 20, seed: 11)
        let trial = try await SpeechTrial.run(speech, impairment: impairment)
        let plain = try PlainOpusBaseline.run(speech, impairment: impairment, seed: 11)
        let scores = try PESQJudge.scores(reference: speech, degraded: [plain.pcm, trial.heard])
        print(String(format: "PESQ-WB at 20%% loss per leg (%.0f%% end to end): plain Opus %.3f, Majlis %.3f", (trial.networkLoss ?? 0) * 100, scores[0], scores[1]))
        #expect(trial.networkLoss ?? 0 > 0.25, "the network really lost packets")
        #expect(trial.speaker.redundancy > 0, "the speaker turned redundancy on")
        #expect(scores[1] >= 2 * scores[0], "Majlis \(scores[1]) vs plain Opus \(scores[0])")
    }
}
