import MajlisAudio

/// How long after it was spoken a listener played a stretch of speech: the lag at which the
/// loudness envelopes (1 ms steps) of what was said and what was heard match best.
public enum SpeechDelay {
    /// Samples per envelope step (1 ms at 48 kHz).
    static let step = AudioFormat.sampleRate / 1000

    /// The lag in milliseconds (0...`maximum`) at which `heard` best repeats `spoken`, both
    /// 48 kHz mono and starting at the same instant; nil when nothing of it was heard.
    public static func milliseconds(spoken: [Int16], heard: [Int16], maximum: Int = 3_000) -> Double? {
        let said = envelope(spoken)
        let played = envelope(heard)
        guard !said.isEmpty, played.count > said.count / 2 else { return nil }
        let mean = said.reduce(0, +) / Double(said.count)
        let centred = said.map { $0 - mean }
        var best: (lag: Int, score: Double)?
        for lag in 0...min(maximum, max(0, played.count - 1)) {
            var score = 0.0
            var energy = 0.0
            for index in centred.indices where lag + index < played.count {
                score += centred[index] * played[lag + index]
                energy += played[lag + index] * played[lag + index]
            }
            guard energy > 0 else { continue }
            let normalised = score / energy.squareRoot()
            if normalised > (best?.score ?? 0) { best = (lag, normalised) }
        }
        return best.map { Double($0.lag) }
    }

    /// Mean absolute amplitude of each millisecond.
    static func envelope(_ samples: [Int16]) -> [Double] {
        stride(from: 0, to: samples.count - step + 1, by: step).map { start in
            var sum = 0
            for index in start..<start + step { sum += abs(Int(samples[index])) }
            return Double(sum) / Double(step)
        }
    }
}
