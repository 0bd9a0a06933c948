import MajlisTransport
/// Forwarding latencies in microseconds, counted in fixed buckets (1 µs wide up to 10 ms), so
/// recording one allocates nothing.
public struct LatencyHistogram: Sendable {
    private var buckets = [Int](repeating: 0, count: 10_001)
    public private(set) var count = 0
    public private(set) var maximum = 0
    /// The sum of the latencies recorded, µs.
    public private(set) var sum = 0

    public init() {}

    public mutating func record(microseconds: Int) {
        let value = max(0, microseconds)
        buckets[min(value, buckets.count - 1)] += 1
        count += 1
        sum += value
        maximum = max(maximum, value)
    }

    /// The value below which `fraction` of the samples lie (0 when empty; 10,000 means "10 ms
    /// or more").
    public func percentile(_ fraction: Double) -> Int {
        guard count > 0 else { return 0 }
        let rank = Int((Double(count) * fraction).rounded(.up))
        var seen = 0
        for (value, hits) in buckets.enumerated() {
            seen += hits
            if seen >= rank { return value }
        }
        return buckets.count - 1
    }

    /// How many latencies were at most each of `edges` (µs, ascending), in one pass.
    public func cumulative(at edges: [Int]) -> [Int] {
        var result: [Int] = []
        var seen = 0
        var value = 0
        for edge in edges {
            while value <= min(edge, buckets.count - 1) {
                seen += buckets[value]
                value += 1
            }
            result.append(edge >= buckets.count - 1 ? count : seen)
        }
        return result
    }
}
