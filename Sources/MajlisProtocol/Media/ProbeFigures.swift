/// One direction of a last-mile probe: the rate the path carried (bits per second with headers,
/// at most the expected rate), the share of packets lost, and the interarrival jitter (ms).
public struct ProbeFigures: Sendable, Equatable, Codable {
    public var bandwidth: Int
    public var loss: Double
    public var jitter: Double
    /// Probe packets that arrived (0: none came: the path is down).
    public var received: Int

    public init(bandwidth: Int, loss: Double, jitter: Double, received: Int) {
        self.bandwidth = bandwidth
        self.loss = loss
        self.jitter = jitter
        self.received = received
    }
}
