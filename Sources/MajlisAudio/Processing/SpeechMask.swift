import Foundation

/// How much of each frequency of a noisy frame is voice: a small network, trained on this
/// machine (`scripts/train-speech-mask.py`), gives each of 22 bands a gain from what the bands
/// held now, in the last 70 ms, on average over the last half second, and at their quietest
/// over the last second. It hears voices in talk, which an estimate of steady noise cannot: the
/// voice is the loudest talker, and its harmonics and onsets stand out of the babble behind it.
///
/// Works on the noise suppressor's spectra (1,024-point transforms of 20 ms every 10 ms at 48 kHz,
/// their power over silence's), and gives one gain per frequency, the bands' gains interpolated
/// between their centres. The same features, layers and interpolation are the training script's;
/// `SpeechMaskTests` checks this copy against gains the script computed.
struct SpeechMask: Sendable {
    /// The bands' centres, Hz: a frequency between two centres counts in both, the nearer more
    /// (the last band takes all above 20 kHz).
    static let edges: [Double] = [0, 200, 400, 600, 800, 1_000, 1_200, 1_400, 1_600, 2_000, 2_400, 2_800, 3_200, 4_000, 4_800, 5_600, 6_800, 8_000, 9_600, 12_000, 15_600, 20_000]
    static var bands: Int { edges.count }
    /// Frames of context (the current one and those before it), the average's memory per frame
    /// (about half a second), and the frames the minimum looks back on (a second).
    static let context = 8
    static let memory = 0.98
    static let minimumSpan = 100
    /// Features are log10 band powers, moved to about -1...1 (int16 samples: silence about 2,
    /// a loud voice 14).
    static let featureCentre = 8.0
    static let featureScale = 3.0

    /// Each frequency's two bands and the share of the lower one.
    private let lower: [Int]
    private let share: [Double]
    private var recent: [[Double]] = []
    private var average: [Double] = []
    private var lows: [[Double]] = []
    private var lowsNext = 0

    /// For the noise suppressor's spectra (the network learnt on them).
    init() {
        let bins = NoiseSuppressor.bins
        var lower = [Int](repeating: Self.bands - 1, count: bins)
        var share = [Double](repeating: 1, count: bins)
        for bin in 0..<bins {
            let frequency = Double(bin * AudioFormat.sampleRate) / Double(NoiseSuppressor.size)
            guard frequency < Self.edges[Self.bands - 1] else { continue }
            var band = 0
            while Self.edges[band + 1] <= frequency { band += 1 }
            lower[bin] = band
            share[bin] = 1 - (frequency - Self.edges[band]) / (Self.edges[band + 1] - Self.edges[band])
        }
        self.lower = lower
        self.share = share
    }

    /// Each frequency's gain (0...1) for a frame's `power` (one per frequency); the context moves on.
    mutating func gains(_ power: [Double]) -> [Double] {
        let bandGains = self.bandGains(power)
        return lower.indices.map { bin in
            let band = lower[bin]
            let upper = min(band + 1, Self.bands - 1)
            return share[bin] * Double(bandGains[band]) + (1 - share[bin]) * Double(bandGains[upper])
        }
    }

    /// Each band's gain for a frame's `power`; the context moves on.
    mutating func bandGains(_ power: [Double]) -> [Float] {
        var energy = [Double](repeating: 0, count: Self.bands)
        for bin in power.indices {
            let band = lower[bin]
            energy[band] += share[bin] * power[bin]
            if band + 1 < Self.bands { energy[band + 1] += (1 - share[bin]) * power[bin] }
        }
        let levels = energy.map { log10(max($0, 1e-30)) }
        if recent.isEmpty {
            recent = [[Double]](repeating: levels, count: Self.context)
            average = levels
            lows = [[Double]](repeating: levels, count: Self.minimumSpan)
        }
        recent.removeLast()
        recent.insert(levels, at: 0)
        for band in 0..<Self.bands { average[band] = Self.memory * average[band] + (1 - Self.memory) * levels[band] }
        lows[lowsNext] = levels
        lowsNext = (lowsNext + 1) % Self.minimumSpan
        var minimum = levels
        for past in lows {
            for band in 0..<Self.bands { minimum[band] = min(minimum[band], past[band]) }
        }
        var input: [Float] = []
        input.reserveCapacity(Self.bands * (Self.context + 2))
        for part in recent + [average, minimum] {
            for value in part { input.append(Float((value - Self.featureCentre) / Self.featureScale)) }
        }
        return SpeechMaskModel.shared.run(input)
    }
}
