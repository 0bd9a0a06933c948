import Foundation

/// Delays counted in buckets a quarter octave wide (about 19%), from 1 µs to over 30 s, so one
/// recording costs a logarithm and an increment. Cumulative since its start: two snapshots
/// subtract to the delays between them (`subtracting`), as Prometheus histograms do.
public struct DelayHistogram: Sendable, Codable, Equatable {
    public static let bucketCount = 100

    /// How many delays fell in each bucket; bucket `i` holds delays up to `upperEdge(i)` µs.
    public private(set) var counts: [Int]
    /// The sum of the delays recorded, µs.
    public private(set) var sum = 0

    public init() { counts = [Int](repeating: 0, count: Self.bucketCount) }

    public var count: Int { counts.reduce(0, +) }

    public static func bucket(microseconds: Int) -> Int {
        guard microseconds > 1 else { return 0 }
        return min(bucketCount - 1, Int((4 * log2(Double(microseconds))).rounded(.up)))
    }

    /// The largest delay (µs) bucket `index` holds.
    public static func upperEdge(_ index: Int) -> Int { Int(pow(2, Double(index) / 4).rounded(.down)) }

    public mutating func record(microseconds: Int) {
        counts[Self.bucket(microseconds: microseconds)] += 1
        sum += max(0, microseconds)
    }

    /// The delay (µs, a bucket's upper edge) at or below which `fraction` of the delays lie; 0 when empty.
    public func percentile(_ fraction: Double) -> Int {
        let total = count
        guard total > 0 else { return 0 }
        let rank = max(1, Int((Double(total) * fraction).rounded(.up)))
        var seen = 0
        for (index, hits) in counts.enumerated() {
            seen += hits
            if seen >= rank { return Self.upperEdge(index) }
        }
        return Self.upperEdge(Self.bucketCount - 1)
    }

    /// The delays recorded since `earlier` (a snapshot of this histogram).
    public func subtracting(_ earlier: DelayHistogram) -> DelayHistogram {
        var result = self
        result.sum = max(0, sum - earlier.sum)
        for index in counts.indices { result.counts[index] = max(0, counts[index] - (earlier.counts.indices.contains(index) ? earlier.counts[index] : 0)) }
        return result
    }
}
