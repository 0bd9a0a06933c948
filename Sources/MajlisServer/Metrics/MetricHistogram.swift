/// Observations counted in fixed buckets (cumulative on export), with their sum: a Prometheus
/// histogram of values other than delays (loss fractions, jitter).
struct MetricHistogram: Sendable {
    /// Upper bounds, ascending; `+Inf` is implied.
    let edges: [Double]
    private(set) var counts: [Int]
    private(set) var count = 0
    private(set) var sum = 0.0

    init(edges: [Double]) {
        self.edges = edges
        counts = [Int](repeating: 0, count: edges.count)
    }

    mutating func observe(_ value: Double) {
        if let index = edges.firstIndex(where: { value <= $0 }) { counts[index] += 1 }
        count += 1
        sum += value
    }

    /// (upper bound, observations at or below it), ascending.
    var cumulative: [(edge: Double, count: Int)] {
        var seen = 0
        return zip(edges, counts).map { edge, hits in
            seen += hits
            return (edge, seen)
        }
    }
}
