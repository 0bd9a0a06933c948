/// An RTP payload carrying redundant audio (RFC 2198): earlier frames, each with its payload
/// type and how many timestamp units it precedes the packet, then the primary frame.
///
/// ```
/// 0                   1                   2                   3
/// |F|   block PT  |  timestamp offset         |   block length    |   (F = 1: 4 bytes)
/// |0|   block PT  |                                                   (last header: 1 byte)
/// redundant data ... primary data
/// ```
public struct REDPayload: Sendable, Equatable {
    /// One earlier frame.
    public struct Block: Sendable, Equatable {
        public var payloadType: UInt8
        /// Timestamp units before the packet's timestamp (14 bits).
        public var timestampOffset: UInt16
        public var data: [UInt8]
        public init(payloadType: UInt8, timestampOffset: UInt16, data: [UInt8]) {
            self.payloadType = payloadType
            self.timestampOffset = timestampOffset
            self.data = data
        }
    }

    /// Oldest first.
    public var redundant: [Block]
    public var primaryPayloadType: UInt8
    public var primary: [UInt8]

    public init(redundant: [Block], primaryPayloadType: UInt8, primary: [UInt8]) {
        self.redundant = redundant
        self.primaryPayloadType = primaryPayloadType
        self.primary = primary
    }

    /// The largest offset and block length the headers can carry.
    public static let maxTimestampOffset: UInt16 = 0x3FFF
    public static let maxBlockLength = 0x3FF

    /// Reads a RED payload; throws on anything malformed.
    public init(parsing bytes: [UInt8]) throws(PacketError) {
        var reader = ByteReader(bytes)
        var headers: [(payloadType: UInt8, offset: UInt16, length: Int)] = []
        while true {
            let first = try reader.u8()
            if first & 0x80 == 0 {
                primaryPayloadType = first & 0x7F
                break
            }
            let rest = try reader.take(3)
            let offset = UInt16(rest[0]) << 6 | UInt16(rest[1] >> 2)
            let length = Int(rest[1] & 0x03) << 8 | Int(rest[2])
            headers.append((first & 0x7F, offset, length))
            if headers.count > 16 { throw PacketError.malformed("more than 16 RED blocks") }
        }
        var blocks: [Block] = []
        for header in headers {
            blocks.append(Block(payloadType: header.payloadType, timestampOffset: header.offset, data: try reader.take(header.length)))
        }
        redundant = blocks
        primary = try reader.take(reader.remaining)
    }

    /// The wire bytes. Blocks longer than 1,023 bytes or older than the offset field can say are
    /// left out (RED cannot carry them).
    public func serialized() -> [UInt8] {
        let carried = redundant.filter { $0.data.count <= Self.maxBlockLength && $0.timestampOffset <= Self.maxTimestampOffset }
        var out: [UInt8] = []
        out.reserveCapacity(1 + carried.count * 4 + carried.reduce(primary.count) { $0 + $1.data.count })
        for block in carried {
            out.append(0x80 | block.payloadType & 0x7F)
            out.append(UInt8(block.timestampOffset >> 6))
            out.append(UInt8(block.timestampOffset & 0x3F) << 2 | UInt8(block.data.count >> 8))
            out.append(UInt8(block.data.count & 0xFF))
        }
        out.append(primaryPayloadType & 0x7F)
        for block in carried { out += block.data }
        out += primary
        return out
    }
}
