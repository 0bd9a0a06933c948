import Foundation

/// A sine tone, continuous across frames (a synthetic microphone).
public struct ToneGenerator: Sendable {
    public var frequency: Double
    /// Peak amplitude, 0...1 of full scale.
    public var amplitude: Double
    public var sampleRate: Int
    private var phase: Double = 0

    public init(frequency: Double, amplitude: Double = 0.5, sampleRate: Int = AudioFormat.sampleRate) {
        self.frequency = frequency
        self.amplitude = amplitude
        self.sampleRate = sampleRate
    }

    /// The next `count` samples.
    public mutating func next(_ count: Int = AudioFormat.frameSamples) -> [Int16] {
        let step = 2 * Double.pi * frequency / Double(sampleRate)
        var out = [Int16](repeating: 0, count: count)
        for index in 0..<count {
            out[index] = Int16((sin(phase) * amplitude * 32767).rounded())
            phase += step
            if phase > 2 * Double.pi { phase -= 2 * Double.pi }
        }
        return out
    }
}
