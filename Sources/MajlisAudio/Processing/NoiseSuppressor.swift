import Foundation

/// Takes noise out of a voice, 20 ms frames of 48 kHz mono, 10 ms later than they come.
///
/// A spectral suppressor: 20 ms square-root Hann windows every 10 ms, each frequency's gain from
/// its signal-to-noise ratio (Ephraim and Malah's log-spectral amplitude estimator, the a priori
/// ratio decided from the last frame), never under `floor`. What decides is the noise's estimate
/// per frequency, not the loudness. It is the larger of two:
///
/// - the anchor: each frequency's quietest smoothed power of the last second, 3 dB up; it falls
///   at once, and rises at once only where that frequency and most of its neighbours stayed
///   within 6 dB for a whole second (noise does, a voice does not); elsewhere it creeps up by
///   3 dB a second. On clean speech it stays at the pauses' silence.
/// - the average: the mean spectrum of the frames judged to hold noise alone (their energy within
///   3 dB of the anchor's or of the average's own, or within 5 dB of a floor the frames' energy
///   kept for 2 s), over about a second. A minimum is far under the mean of a noise that is not
///   steady (six people talking: 5-7 dB), and a frequency's own loud moments cannot tell the
///   noise's peaks from the voice's; a whole frame's energy can.
///
/// In a frame within 1 dB of the average (the noise alone) no gain is over -25 dB (or over `floor`,
/// where that is less deep), so what is left between words does not flicker.
///
/// It also takes out what the echo canceller left of an echo (`process(_:echo:)` with the
/// canceller's echo estimate): a hundredth of the estimate's power (its filter takes 20 dB and
/// more out) is counted with the noise, so a voice over the echo keeps its gains, and a frame
/// that holds no more than that residue and the noise (within 6 dB) is taken 25 dB down.
/// Tried with `EchoFilter` through a room ringing for 280 ms: a hundredth and the 6 dB frames, ERLE
/// 31-36 dB 5 s into far-end speech and the near end of double talk PESQ-WB 3.56-3.75; a
/// thirtieth, 33-39 dB and 3.35-3.51; the frames at 10 dB, 34-42 dB and 3.14-3.23; without the
/// frames, 24-28 dB and 3.58-3.89 (`majlis bench audio`'s figures are in CHANGELOG.md).
///
/// Talk behind a voice (a café, the room next door) is no steady noise: its estimate stays under
/// it. So each gain is multiplied by the speech mask's (`SpeechMask`, a small network trained on
/// this machine to tell a voice from the talk, hum and hiss behind it), which hears a voice by its
/// harmonics and onsets.
///
/// Chosen on espeak-ng voices (the default, female and male, three sentences) with pink noise and
/// six-talker babble at 10 dB SNR, judged by PESQ-WB on the suppressor alone. The anchor alone:
/// clean speech -0.04, pink +0.42 to +0.71, babble +0.04 to +0.11; with the average and the pause
/// cap: clean speech -0.04, pink +0.49 to +0.71, babble +0.09 to +0.21. Through the whole
/// processing and Opus (`majlis bench audio`, three seeds): without the mask pink +0.52 to +0.53,
/// DNSMOS background 3.74 to 3.79, babble +0.07 to +0.12, clean speech -0.05; with the mask's gain
/// multiplied in, pink +0.59 to +0.62, background 3.73 to 3.81, babble +0.27 to +0.33, clean speech
/// -0.02; with the smaller of the two gains, babble +0.20 to +0.26; the mask alone, babble +0.20
/// and pink +0.43; the mask's gain squared, babble +0.35 and clean speech -0.07. With the noise's
/// true mean spectrum known in advance babble gains +0.26 without the mask: a suppressor of steady
/// noise can do little more for talk behind a voice. Pink noise that starts mid-sentence: +0.07
/// with the anchor alone, +0.26 with the 2 s floor (which needs its 2 s: a 1 s floor took the
/// quiet parts of clean speech for noise, -0.16 to -0.25). Gating on the frames' energy 10 dB over
/// the anchor (babble +0.14 to +0.19) let the voice into the estimate of pink noise (+0.37).
public struct NoiseSuppressor: Sendable {
    /// The deepest cut, dB (a gain of `floor` at most, where only noise is).
    public var floor: Double
    /// Whether noise is taken out (otherwise only an echo's residue is).
    public var followsNoise: Bool

    static let window = 960
    static let hop = 480
    static let size = 1_024
    static let bins = size / 2 + 1
    /// Smoothing of the power over time (per 10 ms) before its minimum is taken.
    static let smoothing = 0.85
    /// The minimum is taken over `subwindows` of `subwindowHops` (1 s in all).
    static let subwindows = 4
    static let subwindowHops = 25
    /// The smoothed minimum's bias: noise is this many times its minimum (3 dB).
    static let bias = 2.0
    /// Stationary: the smoothed power's largest over its smallest within a second, at most 6 dB,
    /// and so for at least 60% of the frequencies within 500 Hz.
    static let spread = pow(10, 6.0 / 10)
    static let neighbourhood = 10
    static let neighbourShare = 0.6
    /// Elsewhere the estimate rises by 3 dB a second at most.
    static let creep = pow(10, 3.0 / 10 / 100)
    /// The frequencies whose energy judges a frame (94 Hz to 16 kHz).
    static let broadband = 2..<340
    /// A frame holds noise alone when its energy is under the anchor's or the average's, times
    /// this (3 dB), or under `steadyFloor` times `floorMargin` (5 dB).
    static let noiseMargin = pow(10, 3.0 / 10)
    static let floorMargin = pow(10, 5.0 / 10)
    /// The steady floor: the least (lightly smoothed) frame energy of each quarter second, all
    /// eight of the last 2 s within 4 dB of each other.
    static let floorQuarters = 8
    static let floorSpread = pow(10, 4.0 / 10)
    /// The average's memory (about a second), and its memory where a noise-only frame is 6 dB
    /// under it (the noise went quieter).
    static let averageMemory = 0.99
    static let fallingMemory = 0.8
    static let falling = pow(10, -6.0 / 10)
    /// In a frame within 1.5 dB of the average, no gain over -15 dB.
    static let pauseMargin = pow(10, 1.0 / 10)
    static let pauseGain = pow(10, -25.0 / 20)
    /// What the echo canceller leaves of the echo, as a share of its estimate's power (-20 dB),
    /// and how far over that and the noise a frame may be to hold nothing else (6 dB), and its
    /// gain then (-25 dB).
    static let echoLeak = 0.01
    static let echoMargin = pow(10, 6.0 / 10)
    static let echoGain = pow(10, -25.0 / 20)
    /// The decision-directed a priori ratio's memory, and its least value (-25 dB).
    static let memory = 0.98
    static let leastRatio = pow(10, -2.5)
    /// The power that stands for silence: -96 dBFS white noise's, per frequency.
    static let silence = pow(pow(10, -96.0 / 20) * 32_768, 2) * Double(window / 2)

    private let analysis: [Double]
    private var history = [Double](repeating: 0, count: window)
    private var echoHistory = [Double](repeating: 0, count: window)
    private var overlap = [Double](repeating: 0, count: hop)
    private var smoothed: [Double] = []
    private var noise: [Double] = []
    /// This sub-window's smallest and largest smoothed power, and the finished sub-windows'.
    private var low: [Double] = []
    private var high: [Double] = []
    private var lows: [[Double]] = []
    private var highs: [[Double]] = []
    private var hopsInSubwindow = 0
    /// The mean spectrum of noise-only frames, and how many went into it.
    private var average: [Double] = []
    private var averaged = 0
    /// The noise's estimate used: the larger of the anchor (with its bias) and the average.
    private var estimate: [Double] = []
    private var frameEnergy: Double?
    private var quarterLeast = Double.infinity
    private var quarters: [Double] = []
    private var hopsInQuarter = 0
    private var lastGain = [Double](repeating: 1, count: bins)
    private var lastRatio = [Double](repeating: 1, count: bins)
    private var mask = SpeechMask()

    public init(floor: Double = -25, followsNoise: Bool = true) {
        self.floor = floor
        self.followsNoise = followsNoise
        analysis = (0..<Self.window).map { (0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(Self.window))).squareRoot() }
    }

    /// The noise's estimated level, dBFS of white noise (about -96 where there is none), from
    /// the median of its frequencies: a voice's harmonic held in a few of them is no noise.
    public var noiseLevel: Double {
        guard !estimate.isEmpty else { return -96 }
        let median = estimate.sorted()[estimate.count / 2] / Self.bias
        return 10 * log10(median / Double(Self.window / 2) / (32_768.0 * 32_768.0))
    }

    /// One frame, in place (what comes out is 10 ms older than what went in); `echo`, the echo
    /// canceller's estimate of the echo it took out of the frame (as many samples), if any.
    public mutating func process(_ frame: inout [Int16], echo: [Double]? = nil) {
        var start = 0
        while start + Self.hop <= frame.count {
            let range = start..<start + Self.hop
            let output = step(frame[range], echo: echo.map { $0.count == frame.count ? $0[range] : [] })
            for index in 0..<Self.hop { frame[start + index] = Int16(max(-32_768, min(32_767, output[index].rounded()))) }
            start += Self.hop
        }
    }

    /// 10 ms in, 10 ms out.
    private mutating func step(_ samples: ArraySlice<Int16>, echo: ArraySlice<Double>?) -> [Double] {
        history.removeFirst(Self.hop)
        history.append(contentsOf: samples.lazy.map(Double.init))
        var echoPower: [Double]?
        if let echo, echo.count == Self.hop {
            echoHistory.removeFirst(Self.hop)
            echoHistory.append(contentsOf: echo)
            echoPower = spectrum(echoHistory).power
        }
        let transformed = spectrum(history)
        var (real, imaginary) = (transformed.real, transformed.imaginary)
        let gains = self.gains(transformed.power, echo: echoPower)
        for bin in 0..<Self.bins {
            real[bin] *= gains[bin]
            imaginary[bin] *= gains[bin]
            if bin > 0 && bin < Self.size / 2 {
                real[Self.size - bin] = real[bin]
                imaginary[Self.size - bin] = -imaginary[bin]
            }
        }
        FFT.transform(&real, &imaginary, inverse: true)
        let scale = 1 / Double(Self.size)
        var output = [Double](repeating: 0, count: Self.hop)
        for index in 0..<Self.hop {
            output[index] = overlap[index] + real[index] * scale * analysis[index]
            overlap[index] = real[Self.hop + index] * scale * analysis[Self.hop + index]
        }
        return output
    }

    /// The power spectra `process` takes of `samples`, one each 10 ms (what the speech mask sees).
    static func powerSpectra(_ samples: [Int16]) -> [[Double]] {
        let suppressor = NoiseSuppressor()
        var history = [Double](repeating: 0, count: window)
        var spectra: [[Double]] = []
        var start = 0
        while start + hop <= samples.count {
            history.removeFirst(hop)
            history.append(contentsOf: samples[start..<start + hop].lazy.map(Double.init))
            spectra.append(suppressor.spectrum(history).power)
            start += hop
        }
        return spectra
    }

    /// The windowed transform of `samples` (`window` of them), and its power (over silence's).
    private func spectrum(_ samples: [Double]) -> (real: [Double], imaginary: [Double], power: [Double]) {
        var real = [Double](repeating: 0, count: Self.size)
        var imaginary = [Double](repeating: 0, count: Self.size)
        for index in 0..<Self.window { real[index] = samples[index] * analysis[index] }
        FFT.transform(&real, &imaginary, inverse: false)
        let power = (0..<Self.bins).map { real[$0] * real[$0] + imaginary[$0] * imaginary[$0] + Self.silence }
        return (real, imaginary, power)
    }

    /// Each frequency's gain for this power spectrum (and the echo estimate's); the noise's
    /// estimate moves on.
    private mutating func gains(_ power: [Double], echo echoPower: [Double]?) -> [Double] {
        let bins = Self.bins
        var local = power
        for bin in 1..<bins - 1 { local[bin] = 0.25 * power[bin - 1] + 0.5 * power[bin] + 0.25 * power[bin + 1] }
        if smoothed.isEmpty {
            // The noise starts as the first sound heard; it falls to the quietest at once.
            smoothed = local
            noise = local
            low = local
            high = local
        }
        for bin in 0..<bins {
            smoothed[bin] = Self.smoothing * smoothed[bin] + (1 - Self.smoothing) * local[bin]
            low[bin] = min(low[bin], smoothed[bin])
            high[bin] = max(high[bin], smoothed[bin])
        }
        hopsInSubwindow += 1
        if hopsInSubwindow == Self.subwindowHops {
            lows.append(low)
            highs.append(high)
            if lows.count > Self.subwindows {
                lows.removeFirst()
                highs.removeFirst()
            }
            low = smoothed
            high = smoothed
            hopsInSubwindow = 0
        }
        // The last second's smallest and largest, and which frequencies held steady through it.
        var minimum = low
        var steady = [Bool](repeating: false, count: bins)
        for bin in 0..<bins {
            var largest = high[bin]
            for index in lows.indices {
                minimum[bin] = min(minimum[bin], lows[index][bin])
                largest = max(largest, highs[index][bin])
            }
            steady[bin] = lows.count == Self.subwindows && largest < minimum[bin] * Self.spread
        }
        var steadyAround = 0
        for bin in 0...min(Self.neighbourhood, bins - 1) where steady[bin] { steadyAround += 1 }
        for bin in 0..<bins {
            // The neighbourhood's count, moved along: bin - n ... bin + n.
            let span = Double(min(bin + Self.neighbourhood, bins - 1) - max(bin - Self.neighbourhood, 0) + 1)
            let rise = steady[bin] && Double(steadyAround) >= Self.neighbourShare * span
            if minimum[bin] < noise[bin] || rise {
                noise[bin] = minimum[bin]
            } else {
                noise[bin] = min(minimum[bin], noise[bin] * Self.creep)
            }
            let entering = bin + Self.neighbourhood + 1
            let leaving = bin - Self.neighbourhood
            if entering < bins && steady[entering] { steadyAround += 1 }
            if leaving >= 0 && steady[leaving] { steadyAround -= 1 }
        }
        // The average of the frames that hold noise alone.
        if average.isEmpty { average = noise.map { $0 * Self.bias } }
        var energy = 0.0, anchorEnergy = 0.0, averageEnergy = 0.0
        for bin in Self.broadband {
            energy += power[bin]
            anchorEnergy += Self.bias * noise[bin]
            averageEnergy += average[bin]
        }
        var threshold = max(anchorEnergy, averageEnergy) * Self.noiseMargin
        if let floor = steadyFloor(energy) { threshold = max(threshold, floor * Self.floorMargin) }
        if energy < threshold {
            averaged += 1
            var memory = min(Self.averageMemory, 1 - 1 / Double(averaged))
            if energy < averageEnergy * Self.falling { memory = min(memory, Self.fallingMemory) }
            for bin in 0..<bins { average[bin] = memory * average[bin] + (1 - memory) * power[bin] }
        }
        let floorGain = pow(10, floor / 20)
        var ceiling = 1.0
        if followsNoise && energy < averageEnergy * Self.pauseMargin { ceiling = max(Self.pauseGain, floorGain) }
        // The echo's residue, and whether the frame holds nothing more than it and the noise.
        var echoEnergy = 0.0
        if let echoPower { for bin in Self.broadband { echoEnergy += Self.echoLeak * echoPower[bin] } }
        let noiseEnergy = followsNoise ? averageEnergy : Self.silence * Double(Self.broadband.count)
        if echoEnergy > noiseEnergy && energy < (echoEnergy + noiseEnergy) * Self.echoMargin { ceiling = min(ceiling, Self.echoGain) }
        if estimate.isEmpty { estimate = average }
        let voice = followsNoise ? mask.gains(power) : nil
        var gains = [Double](repeating: 1, count: bins)
        for bin in 0..<bins {
            estimate[bin] = max(Self.bias * noise[bin], average[bin])
            let unwanted = (followsNoise ? estimate[bin] : Self.silence) + Self.echoLeak * (echoPower?[bin] ?? 0)
            let posterior = power[bin] / unwanted
            let prior = max(Self.memory * lastGain[bin] * lastGain[bin] * lastRatio[bin] + (1 - Self.memory) * max(posterior - 1, 0), Self.leastRatio)
            let wiener = prior / (1 + prior)
            let gain = min(1, wiener * exp(0.5 * Self.exponentialIntegral(max(wiener * posterior, 1e-8))))
            lastGain[bin] = gain
            lastRatio[bin] = posterior
            gains[bin] = min(max(gain * (voice?[bin] ?? 1), floorGain), ceiling)
        }
        return gains
    }

    /// The floor the frames' energy kept for 2 s, if it kept one: the least of each quarter
    /// second, all within `floorSpread`. Fluent speech dips lower in one quarter than in the next.
    private mutating func steadyFloor(_ energy: Double) -> Double? {
        let smoothed = frameEnergy.map { 0.7 * $0 + 0.3 * energy } ?? energy
        frameEnergy = smoothed
        quarterLeast = min(quarterLeast, smoothed)
        hopsInQuarter += 1
        if hopsInQuarter == Self.subwindowHops {
            quarters.append(quarterLeast)
            if quarters.count > Self.floorQuarters { quarters.removeFirst() }
            quarterLeast = smoothed
            hopsInQuarter = 0
        }
        guard quarters.count == Self.floorQuarters, let least = quarters.min(), let most = quarters.max(), most < least * Self.floorSpread else {
            return nil
        }
        return least
    }

    /// E1(x) for x > 0 (Abramowitz and Stegun 5.1.53 and 5.1.56; within 5e-5).
    static func exponentialIntegral(_ x: Double) -> Double {
        if x < 1 {
            return -0.57721566 - log(x) + x * (0.99999193 + x * (-0.24991055 + x * (0.05519968 + x * (-0.00976004 + x * 0.00107857))))
        }
        return exp(-x) / x * (x * x + 2.334733 * x + 0.250621) / (x * x + 3.330657 * x + 1.681534)
    }
}
