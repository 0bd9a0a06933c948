import Foundation
import MajlisAudio
import MajlisProtocol

/// Sounds the audio toolbox is judged with, made in the test (no corpus is reachable here):
/// pink noise, a room's echo path, tones with harmonics; and the measures taken on them.
public enum SyntheticSound {
    /// Pink noise (-3 dB an octave, Paul Kellet's filter over white noise), RMS 1.
    public static func pinkNoise(count: Int, seed: UInt64) -> [Double] {
        var random = SplitMix64(seed: seed)
        var b = [Double](repeating: 0, count: 7)
        var noise = (0..<count).map { _ -> Double in
            let white = Double.random(in: -1...1, using: &random)
            b[0] = 0.99886 * b[0] + white * 0.0555179
            b[1] = 0.99332 * b[1] + white * 0.0750759
            b[2] = 0.96900 * b[2] + white * 0.1538520
            b[3] = 0.86650 * b[3] + white * 0.3104856
            b[4] = 0.55000 * b[4] + white * 0.5329522
            b[5] = -0.7616 * b[5] - white * 0.0168980
            let pink = b[0] + b[1] + b[2] + b[3] + b[4] + b[5] + b[6] + white * 0.5362
            b[6] = white * 0.115926
            return pink
        }
        let rms = (noise.reduce(0) { $0 + $1 * $1 } / Double(max(1, count))).squareRoot()
        for index in noise.indices { noise[index] /= rms }
        return noise
    }

    /// The RMS of a signal's active part (its 20 ms frames within 40 dB of the loudest): speech's
    /// level without its pauses.
    public static func activeLevel(_ samples: [Int16]) -> Double {
        let frames = stride(from: 0, to: samples.count - 959, by: 960).map { start in
            (samples[start..<start + 960].reduce(0.0) { $0 + Double($1) * Double($1) } / 960)
        }
        guard let loudest = frames.max(), loudest > 0 else { return 0 }
        let active = frames.filter { $0 > loudest * 1e-4 }
        return (active.reduce(0, +) / Double(active.count)).squareRoot()
    }

    /// `speech` with `noise` (RMS 1; pink noise if none given) `snr` dB below its active level.
    public static func noisy(_ speech: [Int16], snr: Double, seed: UInt64, noise: [Double]? = nil) -> [Int16] {
        let noise = noise ?? pinkNoise(count: speech.count, seed: seed)
        let level = activeLevel(speech) / pow(10, snr / 20)
        return zip(speech, noise).map { clip(Double($0) + $1 * level) }
    }

    /// A room's echo path from a loudspeaker to a microphone: the direct sound after `delay`
    /// milliseconds, then a reverberant tail of decaying noise (RT60 `decay` ms), the whole
    /// `length` ms long, `loss` dB quieter than what was played.
    public static func echoPath(delay: Double = 12, decay: Double = 250, length: Double = 150, loss: Double = 10, seed: UInt64, sampleRate: Int = AudioFormat.sampleRate) -> [Double] {
        var random = SplitMix64(seed: seed)
        let rate = Double(sampleRate)
        let start = Int(delay * rate / 1_000)
        var response = [Double](repeating: 0, count: Int(length * rate / 1_000))
        response[start] = 1
        for index in (start + 1)..<response.count {
            let time = Double(index - start) / rate
            response[index] = Double.random(in: -1...1, using: &random) * 0.3 * pow(10, -3 * time / (decay / 1_000))
        }
        // Scaled so white noise through it loses `loss` dB.
        let energy = response.reduce(0) { $0 + $1 * $1 }.squareRoot()
        let scale = pow(10, -loss / 20) / energy
        return response.map { $0 * scale }
    }

    /// `signal` through `response`, as long as `signal` (by FFT: seconds of audio through a
    /// 150 ms response in a moment, even unoptimized).
    public static func convolve(_ signal: [Int16], _ response: [Double]) -> [Double] {
        var size = 1
        while size < signal.count + response.count { size *= 2 }
        var a = (real: [Double](repeating: 0, count: size), imaginary: [Double](repeating: 0, count: size))
        var b = a
        for index in signal.indices { a.real[index] = Double(signal[index]) }
        for index in response.indices { b.real[index] = response[index] }
        FFT.transform(&a.real, &a.imaginary, inverse: false)
        FFT.transform(&b.real, &b.imaginary, inverse: false)
        for index in 0..<size {
            let real = a.real[index] * b.real[index] - a.imaginary[index] * b.imaginary[index]
            a.imaginary[index] = a.real[index] * b.imaginary[index] + a.imaginary[index] * b.real[index]
            a.real[index] = real
        }
        FFT.transform(&a.real, &a.imaginary, inverse: true)
        return (0..<signal.count).map { a.real[$0] / Double(size) }
    }

    public static func clip(_ value: Double) -> Int16 { Int16(max(-32_768, min(32_767, value.rounded()))) }

    /// A voice-like tone: `frequency` and its harmonics up to 4 kHz, falling 6 dB an octave.
    public static func harmonicTone(frequency: Double, seconds: Double, amplitude: Double = 0.25, sampleRate: Int = AudioFormat.sampleRate) -> [Int16] {
        let count = Int(seconds * Double(sampleRate))
        let harmonics = Array(1...max(1, Int(4_000 / frequency)))
        let norm = harmonics.reduce(0.0) { $0 + 1 / Double($1) }
        return (0..<count).map { index in
            let time = Double(index) / Double(sampleRate)
            let value = harmonics.reduce(0.0) { $0 + sin(2 * Double.pi * frequency * Double($1) * time) / Double($1) }
            return clip(value / norm * amplitude * 32_767)
        }
    }

    /// The fundamental frequency of a steady periodic sound: the autocorrelation's highest peak
    /// between 50 and 1,000 Hz, refined between samples by a parabola.
    public static func fundamental(of samples: [Int16], sampleRate: Int = AudioFormat.sampleRate) -> Double {
        let x = samples.map(Double.init)
        let shortest = sampleRate / 1_000, longest = sampleRate / 50
        let window = min(x.count - longest, 9_600)
        func correlation(_ lag: Int) -> Double {
            var sum = 0.0, energy = 0.0
            for index in 0..<window {
                sum += x[index] * x[index + lag]
                energy += x[index + lag] * x[index + lag]
            }
            return sum / max(1, energy.squareRoot())
        }
        let values = (shortest...longest).map(correlation)
        let best = values.max() ?? 0
        // The first lag within 5% of the best: the period itself, not a multiple of it.
        guard let peak = values.firstIndex(where: { $0 >= best * 0.95 }) else { return 0 }
        var index = peak
        while index + 1 < values.count && values[index + 1] > values[index] { index += 1 }
        var lag = Double(index + shortest)
        if index > 0 && index + 1 < values.count {
            let (a, b, c) = (values[index - 1], values[index], values[index + 1])
            let denominator = a - 2 * b + c
            if denominator != 0 { lag += 0.5 * (a - c) / denominator }
        }
        return Double(sampleRate) / lag
    }

    /// Where `pattern` lines up best in `signal`: the index in `signal` at which it starts
    /// (cross-correlation through the FFT), for finding one pass of a looped recording.
    public static func bestOffset(of pattern: [Int16], in signal: [Int16]) -> Int {
        guard signal.count >= pattern.count, !pattern.isEmpty else { return 0 }
        var size = 1
        while size < signal.count + pattern.count { size <<= 1 }
        var signalReal = signal.map(Double.init) + [Double](repeating: 0, count: size - signal.count)
        var signalImaginary = [Double](repeating: 0, count: size)
        var patternReal = pattern.map(Double.init) + [Double](repeating: 0, count: size - pattern.count)
        var patternImaginary = [Double](repeating: 0, count: size)
        FFT.transform(&signalReal, &signalImaginary, inverse: false)
        FFT.transform(&patternReal, &patternImaginary, inverse: false)
        // signal times the pattern's conjugate: the correlation at each lag.
        var real = (0..<size).map { signalReal[$0] * patternReal[$0] + signalImaginary[$0] * patternImaginary[$0] }
        var imaginary = (0..<size).map { signalImaginary[$0] * patternReal[$0] - signalReal[$0] * patternImaginary[$0] }
        FFT.transform(&real, &imaginary, inverse: true)
        return (0...(signal.count - pattern.count)).max { real[$0] < real[$1] } ?? 0
    }

    /// The level of `frequency` in `samples`, dB (a single-bin DFT over whole periods).
    public static func level(of frequency: Double, in samples: [Int16], sampleRate: Int = AudioFormat.sampleRate) -> Double {
        let periods = (Double(samples.count) * frequency / Double(sampleRate)).rounded(.down)
        let count = Int(periods * Double(sampleRate) / frequency)
        var real = 0.0, imaginary = 0.0
        for index in 0..<count {
            let phase = 2 * Double.pi * frequency * Double(index) / Double(sampleRate)
            real += Double(samples[index]) * cos(phase)
            imaginary += Double(samples[index]) * sin(phase)
        }
        return 20 * log10(max(1e-9, (real * real + imaginary * imaginary).squareRoot() / Double(max(1, count))))
    }
}
