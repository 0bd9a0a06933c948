import MajlisLab
import MajlisTestSupport
import Testing

/// The speech judge the quality tests rest on.
struct PESQJudgeTests {
    /// Speech said twice, heard with the pause between the readings a little longer (playout
    /// adapts in pauses), is judged as the clean speech it is. Aligned by the waveform alone,
    /// the second reading heard matched the first one said best, and half the speech was judged
    /// against silence (about 1.25: the rare failure of the 20% loss trial).
    @Test(arguments: [1, 7, 20])
    func aRepeatedReadingHeardWithALongerPauseIsAlignedOnTheWhole(longer milliseconds: Int) async throws {
        let reading = try await offPool { try SpeechSample.make() }
        let pause = [Int16](repeating: 0, count: 24_000)
        let spoken = reading + pause + reading
        let heard = [Int16](repeating: 0, count: 160_800) + reading + pause + [Int16](repeating: 0, count: 48 * milliseconds) + reading
            + [Int16](repeating: 0, count: 48_000)
        let scores = try await offPool { try PESQJudge.scores(reference: spoken, degraded: [heard]) }
        #expect(scores[0] >= 4, "scored \(scores[0])")
    }
}
