import Foundation

/// A ten-band graphic equalizer, 31 Hz to 16 kHz an octave apart, -15...+15 dB a band. Each band
/// is a peaking filter; their gains are solved so that the whole response at each band's centre is
/// the gain set there (neighbouring bands' skirts overlap and would otherwise add up).
public struct Equalizer: Sendable {
    /// The bands' centres, Hz.
    public static let frequencies: [Double] = [31, 62, 125, 250, 500, 1_000, 2_000, 4_000, 8_000, 16_000]
    /// The gain range of a band, dB.
    public static let range = -15.0...15.0
    /// The filters' width: an octave's bands overlap enough for a smooth curve.
    public static let q = 1.6

    private let sampleRate: Double
    private var filters: [Biquad]
    /// The gains set, one per band, dB.
    public private(set) var gains: [Double]

    public init(gains: [Double] = Array(repeating: 0, count: 10), sampleRate: Int = AudioFormat.sampleRate) {
        self.sampleRate = Double(sampleRate)
        filters = Self.frequencies.map { _ in Biquad() }
        self.gains = Array(repeating: 0, count: 10)
        set(gains)
    }

    /// Whether every band is at 0 dB (the equalizer passes audio unchanged).
    public var isFlat: Bool { gains.allSatisfy { $0 == 0 } }

    /// New gains (ten, each clamped to the range), from the next sample on.
    public mutating func set(_ gains: [Double]) {
        let wanted = (0..<10).map { index in
            index < gains.count ? min(Self.range.upperBound, max(Self.range.lowerBound, gains[index])) : 0
        }
        self.gains = wanted
        let designed = Self.design(wanted, sampleRate: sampleRate)
        for index in filters.indices { filters[index].take(designed[index]) }
    }

    /// The whole chain's gain at `frequency`, dB.
    public func response(at frequency: Double) -> Double {
        filters.reduce(0) { $0 + $1.response(at: frequency, sampleRate: sampleRate) }
    }

    /// Filters whose summed response meets `targets` at the centres (see `filterGains`).
    static func design(_ targets: [Double], sampleRate: Double) -> [Biquad] {
        zip(frequencies, filterGains(for: targets, sampleRate: sampleRate)).map { Biquad.peaking(frequency: $0, q: q, gain: $1, sampleRate: sampleRate) }
    }

    /// The gains of the peaking filters (width `q`, at `frequencies`) whose summed response
    /// meets `targets` at the centres: each is corrected by what is still missing at its centre, a
    /// few times over (the response in dB is nearly linear in the gains, so this converges in a
    /// handful of rounds). The web app's equalizer is built from them.
    public static func filterGains(for targets: [Double], sampleRate: Double) -> [Double] {
        var settings = targets
        guard targets.contains(where: { $0 != 0 }) else { return settings }
        for _ in 0..<12 {
            let current = zip(frequencies, settings).map { Biquad.peaking(frequency: $0, q: q, gain: $1, sampleRate: sampleRate) }
            for (index, frequency) in frequencies.enumerated() {
                let measured = current.reduce(0) { $0 + $1.response(at: frequency, sampleRate: sampleRate) }
                settings[index] += targets[index] - measured
            }
        }
        return settings
    }

    /// `samples` through the equalizer, in place.
    public mutating func process(_ samples: inout [Float]) {
        guard !isFlat else { return }
        for index in samples.indices {
            var value = Double(samples[index])
            for band in filters.indices { value = filters[band].process(value) }
            samples[index] = Float(value)
        }
    }
}
