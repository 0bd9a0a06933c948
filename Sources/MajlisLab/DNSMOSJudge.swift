import Foundation
import MajlisAudio

/// DNSMOS (ITU-T P.835 as Microsoft's DNS challenge models it) through `scripts/dnsmos.py` and
/// PyPI's `speechmos`: how clean speech sounds with no reference to compare it with. Optional:
/// the models take some hundred megabytes of packages, which the tests do not need.
public enum DNSMOSJudge {
    /// Speech quality, background (how little noise is heard) and overall, 1 to 5.
    public struct Scores: Sendable, Decodable {
        public var sig: Double
        public var bak: Double
        public var ovrl: Double
    }

    static var script: String {
        URL(fileURLWithPath: PESQJudge.script).deletingLastPathComponent().appendingPathComponent("dnsmos.py").path
    }

    /// Whether the judge can run here (speechmos installed in the tree's `.venv` or the system's Python).
    public static var isAvailable: Bool {
        (try? SpeechSample.run(PESQJudge.python, ["-c", "import speechmos, librosa, onnxruntime"]).status) == 0
    }

    /// The scores of each signal (48 kHz mono).
    public static func scores(_ signals: [[Int16]]) throws -> [Scores] {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-dnsmos-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        var paths: [String] = []
        for (index, signal) in signals.enumerated() {
            let path = "\(work)/\(index).wav"
            try WAVFile.write(PCMBuffer(sampleRate: AudioFormat.sampleRate, channels: 1, int16: signal), to: path)
            paths.append(path)
        }
        let result = try SpeechSample.run(PESQJudge.python, [script] + paths)
        let scores = result.output.split(separator: "\n").compactMap { try? JSONDecoder().decode(Scores.self, from: Data($0.utf8)) }
        guard result.status == 0, scores.count == signals.count else {
            throw SpeechSample.Failure(description: "the DNSMOS judge failed (pip install speechmos librosa onnxruntime): \(result.output.suffix(300))")
        }
        return scores
    }
}
