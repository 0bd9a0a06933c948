/// Mixes several speakers into one frame without clipping: sums them, and when the sum would
/// exceed full scale lowers the gain at once, then lets it recover slowly (a limiter), so loud
/// moments are not distorted and quiet ones keep their level.
public struct Mixer: Sendable {
    /// The current gain (1 when nothing needed limiting lately).
    public private(set) var gain: Double = 1
    /// How fast the gain comes back toward 1, per frame.
    public var release: Double = 0.05

    public init() {}

    /// One mixed frame from `frames` (each the same length; shorter ones count as silence).
    public mutating func mix(_ frames: [[Int16]]) -> [Int16] {
        let length = frames.map(\.count).max() ?? 0
        guard length > 0 else { return [] }
        var sum = [Int32](repeating: 0, count: length)
        for frame in frames {
            for (index, sample) in frame.enumerated() { sum[index] += Int32(sample) }
        }
        let peak = sum.map { abs(Int($0)) }.max() ?? 0
        let needed = peak > 32767 ? 32767 / Double(peak) : 1
        if needed < gain {
            gain = needed
        } else {
            gain = min(needed, gain + (1 - gain) * release)
        }
        return sum.map { Int16(max(-32767, min(32767, (Double($0) * gain).rounded()))) }
    }
}
