import Foundation
import MajlisAudio

/// `scripts/train-speech-mask.py --gains`: the band gains the training script's own copy of the
/// speech mask gives a sound, with the weights built into the tree (to check the Swift copy by).
public enum SpeechMaskScript {
    static var script: String {
        URL(fileURLWithPath: PESQJudge.script).deletingLastPathComponent().appendingPathComponent("train-speech-mask.py").path
    }

    /// 22 band gains each 10 ms of `samples` (48 kHz mono).
    public static func bandGains(_ samples: [Int16]) throws -> [[Float]] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-mask-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try WAVFile.write(PCMBuffer(sampleRate: AudioFormat.sampleRate, channels: 1, int16: samples), to: path)
        let result = try SpeechSample.run(PESQJudge.python, [script, "--gains", path])
        let rows = result.output.split(separator: "\n").map { $0.split(separator: " ").compactMap { Float($0) } }
        guard result.status == 0, !rows.isEmpty else {
            throw SpeechSample.Failure(description: "the speech mask script failed (scripts/install-deps --test): \(result.output.suffix(300))")
        }
        return rows
    }
}
