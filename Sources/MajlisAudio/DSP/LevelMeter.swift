import Foundation

/// Loudness of a frame as RFC 6464 measures it: RMS in dBov (0 is a full-scale square wave),
/// carried as 0...127 meaning -0...-127 dBov.
public enum LevelMeter {
    /// RMS level in dBov, -127...0.
    public static func dBov(_ samples: [Int16]) -> Double {
        guard !samples.isEmpty else { return -127 }
        var sum: Double = 0
        for sample in samples {
            let value = Double(sample) / 32768
            sum += value * value
        }
        let rms = (sum / Double(samples.count)).squareRoot()
        guard rms > 0 else { return -127 }
        return max(-127, min(0, 20 * log10(rms)))
    }

    /// The RFC 6464 audio level field: 0 (loudest) ... 127 (silence).
    public static func audioLevel(_ samples: [Int16]) -> UInt8 {
        UInt8(min(127, max(0, (-dBov(samples)).rounded())))
    }

    /// A 0...100 loudness for meters in the interface (0 at -70 dBov or quieter).
    public static func percent(_ samples: [Int16]) -> Int {
        Int((max(0, min(1, (dBov(samples) + 70) / 70)) * 100).rounded())
    }
}
