import Foundation

/// A second-order filter (the audio EQ cookbook's peaking equalizer), transposed direct form II.
struct Biquad {
    private var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
    private var z1 = 0.0, z2 = 0.0

    /// A peak (or dip) of `gain` dB at `frequency`, `q` wide; 0 dB passes everything unchanged.
    static func peaking(frequency: Double, q: Double, gain: Double, sampleRate: Double) -> Biquad {
        var filter = Biquad()
        let a = pow(10, gain / 40)
        let w = 2 * Double.pi * frequency / sampleRate
        let alpha = sin(w) / (2 * q)
        let a0 = 1 + alpha / a
        filter.b0 = (1 + alpha * a) / a0
        filter.b1 = -2 * cos(w) / a0
        filter.b2 = (1 - alpha * a) / a0
        filter.a1 = -2 * cos(w) / a0
        filter.a2 = (1 - alpha / a) / a0
        return filter
    }

    /// Its gain at `frequency`, dB.
    func response(at frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        // |B(e^jw)| / |A(e^jw)| with z^-1 = e^-jw.
        func magnitude(_ c0: Double, _ c1: Double, _ c2: Double) -> Double {
            let real = c0 + c1 * cos(w) + c2 * cos(2 * w)
            let imaginary = -(c1 * sin(w) + c2 * sin(2 * w))
            return (real * real + imaginary * imaginary).squareRoot()
        }
        return 20 * log10(magnitude(b0, b1, b2) / magnitude(1, a1, a2))
    }

    /// Keeps the filter's state, takes new coefficients (no click on a change).
    mutating func take(_ other: Biquad) {
        (b0, b1, b2, a1, a2) = (other.b0, other.b1, other.b2, other.a1, other.a2)
    }

    mutating func process(_ x: Double) -> Double {
        let y = b0 * x + z1
        z1 = b1 * x - a1 * y + z2
        z2 = b2 * x - a2 * y
        return y
    }
}
