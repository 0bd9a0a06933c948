import Foundation

/// Measures how much of a signal's energy sits at one frequency (Goertzel), and finds the
/// strongest of several candidates: enough to check that a tone made it through a call.
public enum ToneDetector {
    /// Power of `frequency` in `samples`, normalized so a full-scale sine gives about 0.5.
    public static func power(of frequency: Double, in samples: [Int16], sampleRate: Int = AudioFormat.sampleRate) -> Double {
        guard !samples.isEmpty else { return 0 }
        let omega = 2 * Double.pi * frequency / Double(sampleRate)
        let coefficient = 2 * cos(omega)
        var previous = 0.0
        var beforePrevious = 0.0
        for sample in samples {
            let current = Double(sample) / 32768 + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let magnitude = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        let n = Double(samples.count)
        return 2 * magnitude / (n * n)
    }

    /// The candidate frequency with the most power.
    public static func strongest(of candidates: [Double], in samples: [Int16], sampleRate: Int = AudioFormat.sampleRate) -> Double? {
        candidates.max { power(of: $0, in: samples, sampleRate: sampleRate) < power(of: $1, in: samples, sampleRate: sampleRate) }
    }
}
