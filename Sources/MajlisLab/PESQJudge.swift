import Foundation
import MajlisAudio

/// PESQ wideband (ITU-T P.862.2) through `scripts/pesq-judge.py` and the `pesq` package from
/// PyPI: the test-side judge of speech quality.
public enum PESQJudge {
    /// The judge script in this source tree.
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/pesq-judge.py").path
    }

    /// The Python of the tree's `.venv` (made by `scripts/install-deps --test`), else the system's.
    static var python: String {
        let venv = URL(fileURLWithPath: script).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "python3"
    }

    /// One score per degraded signal against `reference` (all 48 kHz mono; each is aligned to
    /// the reference first, so leading silence and delay do not matter).
    public static func scores(reference: [Int16], degraded: [[Int16]]) throws -> [Double] {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-pesq-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        // MAJLIS_PESQ_KEEP=1 keeps what was judged (the reference and each degraded signal, 16 kHz).
        let keep = ProcessInfo.processInfo.environment["MAJLIS_PESQ_KEEP"] == "1"
        defer { if !keep { try? FileManager.default.removeItem(atPath: work) } }
        func write(_ samples: [Int16], _ name: String) throws -> String {
            let path = "\(work)/\(name).wav"
            try WAVFile.write(Resampler.resample(PCMBuffer(sampleRate: 48_000, channels: 1, int16: samples), to: 16_000), to: path)
            return path
        }
        var arguments = [script, try write(reference, "reference")]
        for (index, signal) in degraded.enumerated() { arguments.append(try write(signal, "degraded-\(index)")) }
        let result = try SpeechSample.run(python, arguments)
        let scores = result.output.split(separator: "\n").compactMap { Double($0) }
        if keep { print("PESQ judge: kept \(work) (scores \(scores))") }
        guard result.status == 0, scores.count == degraded.count else {
            throw SpeechSample.Failure(description: "the PESQ judge failed (is `pesq` installed? scripts/install-deps --test): \(result.output)")
        }
        return scores
    }
}
