import MajlisForwarding
import MajlisTransport

/// Metrics in the Prometheus text exposition format (version 0.0.4), built family by family.
struct PrometheusText {
    private(set) var text = ""

    /// A family with its help and type, then its samples (`labels` already formatted).
    private mutating func family(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    private mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
        let rendered = labels.isEmpty ? "" : "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
        text += "\(name)\(rendered) \(value)\n"
    }

    mutating func gauge(_ name: String, _ help: String, _ value: Double, labels: [(String, String)] = []) {
        family(name, "gauge", help)
        sample(name, labels, Self.number(value))
    }

    mutating func counter(_ name: String, _ help: String, _ samples: [([(String, String)], Double)]) {
        family(name, "counter", help)
        for (labels, value) in samples { sample(name, labels, Self.number(value)) }
    }

    /// Delay histograms (µs) in seconds, at octave edges from 1 µs to 16 s.
    mutating func histogram(_ name: String, _ help: String, _ series: [([(String, String)], DelayHistogram)]) {
        family(name, "histogram", help)
        for (labels, histogram) in series {
            var seen = 0
            var index = 0
            for octave in 0...24 {
                let bucket = octave * 4
                while index <= bucket {
                    seen += histogram.counts[index]
                    index += 1
                }
                sample(name + "_bucket", labels + [("le", Self.number(Double(DelayHistogram.upperEdge(bucket)) / 1e6))], String(seen))
            }
            sample(name + "_bucket", labels + [("le", "+Inf")], String(histogram.count))
            sample(name + "_sum", labels, Self.number(Double(histogram.sum) / 1e6))
            sample(name + "_count", labels, String(histogram.count))
        }
    }

    /// Forwarding latencies (µs buckets) in seconds, at octave edges from 1 µs to 8 ms.
    mutating func histogram(_ name: String, _ help: String, latency: LatencyHistogram) {
        family(name, "histogram", help)
        let edges = (0...13).map { 1 << $0 }
        for (edge, seen) in zip(edges, latency.cumulative(at: edges)) {
            sample(name + "_bucket", [("le", Self.number(Double(edge) / 1e6))], String(seen))
        }
        sample(name + "_bucket", [("le", "+Inf")], String(latency.count))
        sample(name + "_sum", [], Self.number(Double(latency.sum) / 1e6))
        sample(name + "_count", [], String(latency.count))
    }

    mutating func histogram(_ name: String, _ help: String, _ series: [([(String, String)], MetricHistogram)]) {
        family(name, "histogram", help)
        for (labels, histogram) in series {
            for (edge, seen) in histogram.cumulative { sample(name + "_bucket", labels + [("le", Self.number(edge))], String(seen)) }
            sample(name + "_bucket", labels + [("le", "+Inf")], String(histogram.count))
            sample(name + "_sum", labels, Self.number(histogram.sum))
            sample(name + "_count", labels, String(histogram.count))
        }
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
    }
}
