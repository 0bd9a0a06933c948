/// Volume as apps set it: 0 (silent) to 400 (four times), 100 unchanged (seed 002's range).
public enum Gain {
    /// The allowed range.
    public static let range = 0...400

    /// `samples` scaled by `volume` percent, clipped at full scale.
    public static func apply(_ volume: Int, to samples: [Int16]) -> [Int16] {
        let clamped = min(range.upperBound, max(range.lowerBound, volume))
        if clamped == 100 { return samples }
        let factor = Double(clamped) / 100
        return samples.map { Int16(max(-32768, min(32767, (Double($0) * factor).rounded()))) }
    }
}
