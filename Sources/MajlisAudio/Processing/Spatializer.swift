import MajlisProtocol

/// Places each speaker around the listener and renders them binaurally (for headphones): each
/// one's voice through the HRTF of its direction, the delay and impulse response of each ear, and
/// quieter with distance (the inverse of the distance beyond a metre). Mono 20 ms frames in,
/// one interleaved stereo frame out. Not thread-safe: the media engine's thread owns it.
public final class Spatializer {
    private let hrtf: HRTF
    /// Each speaker's place (absent: straight ahead), and the end of its last frames.
    public var positions: [UInt32: SpatialPosition] = [:]
    private var history: [UInt32: [Float]] = [:]
    private var mixer = Mixer()
    /// The longest ear delay a filter may carry, samples (2.5 ms).
    private static let maximumDelay = 120

    public init(hrtf: HRTF) {
        self.hrtf = hrtf
    }

    /// One stereo frame (left, right, left, ...) of `sources`, each a mono frame by speaker.
    public func render(_ sources: [(id: UInt32, frame: [Int16])]) -> [Int16] {
        let count = AudioFormat.frameSamples
        var rendered: [[Int16]] = []
        for (id, frame) in sources where frame.count == count {
            let position = positions[id] ?? SpatialPosition(azimuth: 0)
            let filters = hrtf.filters(for: position)
            let gain = Float(1 / max(1, position.distance))
            let keep = hrtf.filterLength + Self.maximumDelay
            let past = history[id] ?? [Float](repeating: 0, count: keep)
            let input = past + frame.map { Float($0) * gain }
            history[id] = Array(input.suffix(keep))
            var stereo = [Int16](repeating: 0, count: 2 * count)
            input.withUnsafeBufferPointer { x in
                for (ear, (filter, delay)) in [(filters.left, filters.leftDelay), (filters.right, filters.rightDelay)].enumerated() {
                    let shift = min(Self.maximumDelay, max(0, delay))
                    filter.withUnsafeBufferPointer { h in
                        for n in 0..<count {
                            let end = keep + n - shift
                            var sum: Float = 0
                            for k in 0..<h.count { sum += h[k] * x[end - k] }
                            stereo[2 * n + ear] = Int16(max(-32_767, min(32_767, sum.rounded())))
                        }
                    }
                }
            }
            rendered.append(stereo)
        }
        // Speakers who went quiet are forgotten (their tails have rung out by the next word).
        let heard = Set(sources.map(\.id))
        history = history.filter { heard.contains($0.key) }
        return rendered.isEmpty ? [Int16](repeating: 0, count: 2 * count) : mixer.mix(rendered)
    }
}
