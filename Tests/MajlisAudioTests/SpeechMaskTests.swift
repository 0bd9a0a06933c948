import Foundation
@testable import MajlisAudio
import MajlisLab
import Testing

/// The speech mask in Swift is the one the training script trained: the same features, layers and
/// weights give the same band gains, frame by frame.
@Suite struct SpeechMaskTests {
    @Test func theSwiftMaskGivesTheTrainingScriptsGains() async throws {
        let speech = try SpeechSample.make(SpeechSample.sentence)
        let noisy = SyntheticSound.noisy(speech, snr: 5, seed: 3, noise: try SpeechSample.babble(count: speech.count, seed: 3))
        let expected = try SpeechMaskScript.bandGains(noisy)
        var mask = SpeechMask()
        let gains = NoiseSuppressor.powerSpectra(noisy).map { mask.bandGains($0) }
        #expect(gains.count == expected.count)
        var worst: Float = 0
        for (row, script) in zip(gains, expected) {
            #expect(row.count == script.count)
            for (gain, other) in zip(row, script) { worst = max(worst, abs(gain - other)) }
        }
        // Float32 here, double precision features there.
        #expect(worst < 1e-3, "the Swift mask differs from the script's by up to \(worst)")
        // Not a mask that passes or stops everything: some bands go through, some go down.
        let all = gains.joined()
        #expect(all.contains { $0 > 0.8 } && all.contains { $0 < 0.2 })
    }

    @Test func halfPrecisionWeightsReadAsTheirValues() {
        let cases: [(UInt16, Float)] = [(0x3C00, 1), (0xC000, -2), (0x7BFF, 65_504), (0x0001, 5.9604645e-8), (0x3555, 0.33325195), (0x0000, 0), (0xFC00, -.infinity)]
        for (bits, value) in cases { #expect(SpeechMaskModel.float(half: bits) == value, "0x\(String(bits, radix: 16))") }
    }
}
