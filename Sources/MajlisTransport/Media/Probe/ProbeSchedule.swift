/// The packets of a last-mile probe in one direction (docs/protocol.md section 15), the same
/// for a client's uplink and the server's downlink: a steady phase well under the expected rate
/// (loss and jitter, without a queue of its own making), then a phase at the expected rate (how
/// much the path carries). Each packet is RTP of payload type `payloadType` whose timestamp is
/// its send time (48 per millisecond) and whose first payload byte is its phase.
public struct ProbeSchedule: Sendable, Equatable {
    public static let payloadType: UInt8 = 127
    /// The steady phase: 4 s of 50-byte payloads, 200 a second (about 140 kb/s on the wire)
    /// or, under a lower expected rate, at half of it.
    public static let steadyDuration = 4_000.0
    public static let steadyPayload = 50
    /// The capacity phase: 2 s of 1,000-byte payloads at the expected rate.
    public static let capacityDuration = 2_000.0
    public static let capacityPayload = 1_000
    /// Bytes each packet carries besides its payload: RTP header, SRTP tag, UDP and IPv4 headers.
    public static let overhead = 12 + 10 + 28
    /// The expected rates a probe accepts, bits per second (headers counted).
    public static let bitrates = 64_000...10_000_000
    public static let duration = steadyDuration + capacityDuration

    /// `bitrate` within `bitrates`.
    public static func clamped(_ bitrate: Int) -> Int { min(bitrates.upperBound, max(bitrates.lowerBound, bitrate)) }

    public enum Phase: UInt8, Sendable { case steady = 1, capacity = 2 }

    public struct Packet: Sendable, Equatable {
        public var phase: Phase
        /// Payload bytes.
        public var size: Int
        /// When it is due, milliseconds from the start.
        public var at: Double
    }

    public let bitrate: Int
    /// Packets in each phase, and the time between two of them (ms).
    public let steadyCount: Int
    public let steadyInterval: Double
    public let capacityCount: Int
    public let capacityInterval: Double
    private var next = 0

    public init(bitrate: Int) {
        self.bitrate = Self.clamped(bitrate)
        let steadyBits = Double((Self.steadyPayload + Self.overhead) * 8)
        steadyInterval = max(5, steadyBits / (Double(self.bitrate) / 2) * 1_000)
        steadyCount = Int(Self.steadyDuration / steadyInterval)
        capacityInterval = Double((Self.capacityPayload + Self.overhead) * 8) / Double(self.bitrate) * 1_000
        capacityCount = Int(Self.capacityDuration / capacityInterval)
    }

    /// Every packet in order.
    public func packet(_ index: Int) -> Packet? {
        if index < steadyCount { return Packet(phase: .steady, size: Self.steadyPayload, at: Double(index) * steadyInterval) }
        let capacity = index - steadyCount
        guard capacity < capacityCount else { return nil }
        return Packet(phase: .capacity, size: Self.capacityPayload, at: Self.steadyDuration + Double(capacity) * capacityInterval)
    }

    /// The packets due by `elapsed` ms from the start, not handed out before, with their
    /// sequence index (from 0).
    public mutating func due(elapsed: Double) -> [(index: Int, packet: Packet)] {
        var result: [(Int, Packet)] = []
        while let packet = packet(next), packet.at <= elapsed {
            result.append((next, packet))
            next += 1
        }
        return result
    }

    public var finished: Bool { packet(next) == nil }
}
