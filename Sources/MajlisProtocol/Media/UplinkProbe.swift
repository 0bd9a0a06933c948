/// One packet of a probe train (docs/protocol.md section 12, "Capacity"): the value of a binding
/// request's `PROBE` attribute. A client sends a short train of padded binding requests, evenly
/// paced and faster than any voice needs, so the server can see from how they arrive whether its
/// uplink is thinner than that before the first word is spoken.
///
/// Value: index in the train (1 byte), packets in the train (1 byte), two zero bytes, the send
/// time in milliseconds on the sender's own clock (4 bytes, big-endian, wrapping), then zero
/// bytes of padding.
public struct UplinkProbe: Sendable, Equatable {
    public var index: Int
    public var count: Int
    public var sentAt: UInt32

    public init(index: Int, count: Int, sentAt: UInt32) {
        self.index = index
        self.count = count
        self.sentAt = sentAt
    }

    /// Reads an attribute value; nil when it is too short or its index is outside its train.
    public init?(value: [UInt8]) {
        guard value.count >= 8, value[0] < value[1] else { return nil }
        index = Int(value[0])
        count = Int(value[1])
        sentAt = UInt32(value[4]) << 24 | UInt32(value[5]) << 16 | UInt32(value[6]) << 8 | UInt32(value[7])
    }

    /// The attribute value, padded with zeros to `length` bytes (at least 8).
    public func value(length: Int) -> [UInt8] {
        var out: [UInt8] = [UInt8(clamping: index), UInt8(clamping: count), 0, 0]
        out.put32(sentAt)
        return out + [UInt8](repeating: 0, count: max(0, length - out.count))
    }
}
