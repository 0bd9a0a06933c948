/// What a last-mile probe found (docs/protocol.md section 15): each direction's figures, the
/// round trip, and a grade.
public struct ProbeReport: Sendable, Equatable, Codable {
    public var uplink: ProbeFigures
    public var downlink: ProbeFigures
    /// Milliseconds (the median of the bindings' round trips; nil: no binding was answered).
    public var roundTrip: Double?
    public var quality: NetworkQualityLevel

    public init(uplink: ProbeFigures, downlink: ProbeFigures, roundTrip: Double?) {
        self.uplink = uplink
        self.downlink = downlink
        self.roundTrip = roundTrip
        quality = Self.grade(uplink: uplink, downlink: downlink, roundTrip: roundTrip)
    }

    /// The worst of what each direction's loss and jitter and the round trip say (the levels of
    /// `network.quality`), and of its bandwidth: under 64 kb/s poor (speech with its protection
    /// no longer fits), under 40 kb/s bad; nothing received, down.
    public static func grade(uplink: ProbeFigures, downlink: ProbeFigures, roundTrip: Double?) -> NetworkQualityLevel {
        guard uplink.received > 0, downlink.received > 0, let roundTrip else { return .down }
        return [uplink, downlink].map { figures in
            let bandwidth: NetworkQualityLevel = figures.bandwidth < 40_000 ? .bad : figures.bandwidth < 64_000 ? .poor : .excellent
            return Swift.max(bandwidth, NetworkQualityLevel(loss: figures.loss, jitter: figures.jitter, roundTrip: roundTrip))
        }.max() ?? .down
    }
}
