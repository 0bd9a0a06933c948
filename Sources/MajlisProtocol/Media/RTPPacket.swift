/// An RTP packet (RFC 3550) with RFC 8285 header extensions (one-byte and two-byte forms).
public struct RTPPacket: Sendable, Equatable {
    /// One header extension element.
    public struct Extension: Sendable, Equatable {
        public var id: UInt8
        public var data: [UInt8]
        public init(id: UInt8, data: [UInt8]) {
            self.id = id
            self.data = data
        }
    }

    public var marker: Bool
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    public var csrcs: [UInt32]
    public var extensions: [Extension]
    public var payload: [UInt8]
    /// Padding bytes at the end (0 for none).
    public var paddingLength: Int

    public init(
        marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32, csrcs: [UInt32] = [],
        extensions: [Extension] = [], payload: [UInt8], paddingLength: Int = 0
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.extensions = extensions
        self.payload = payload
        self.paddingLength = paddingLength
    }

    /// Reads a packet; throws on anything malformed.
    public init(parsing bytes: [UInt8]) throws(PacketError) {
        var reader = ByteReader(bytes)
        let first = try reader.u8()
        guard first >> 6 == 2 else { throw PacketError.badVersion(first >> 6) }
        let hasPadding = first & 0x20 != 0
        let hasExtension = first & 0x10 != 0
        let csrcCount = Int(first & 0x0F)
        let second = try reader.u8()
        marker = second & 0x80 != 0
        payloadType = second & 0x7F
        sequenceNumber = try reader.u16()
        timestamp = try reader.u32()
        ssrc = try reader.u32()
        var csrcs: [UInt32] = []
        for _ in 0..<csrcCount { csrcs.append(try reader.u32()) }
        self.csrcs = csrcs
        var extensions: [Extension] = []
        if hasExtension {
            let profile = try reader.u16()
            let words = Int(try reader.u16())
            var block = ByteReader(try reader.take(words * 4))
            if profile == 0xBEDE {
                while block.remaining > 0 {
                    let head = try block.u8()
                    if head == 0 { continue }  // padding
                    let id = head >> 4
                    if id == 15 { break }  // reserved: stop
                    extensions.append(Extension(id: id, data: try block.take(Int(head & 0x0F) + 1)))
                }
            } else if profile & 0xFFF0 == 0x1000 {
                while block.remaining > 0 {
                    let id = try block.u8()
                    if id == 0 { continue }
                    let length = Int(try block.u8())
                    extensions.append(Extension(id: id, data: try block.take(length)))
                }
            }
        }
        self.extensions = extensions
        var end = bytes.count
        if hasPadding {
            guard let last = bytes.last, last > 0, Int(last) <= reader.remaining else { throw PacketError.malformed("bad RTP padding") }
            end -= Int(last)
            paddingLength = Int(last)
        } else {
            paddingLength = 0
        }
        payload = Array(bytes[reader.offset..<end])
    }

    /// The wire bytes.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(12 + payload.count + 16)
        var first: UInt8 = 0x80 | UInt8(min(15, csrcs.count))
        if paddingLength > 0 { first |= 0x20 }
        if !extensions.isEmpty { first |= 0x10 }
        out.append(first)
        out.append((marker ? 0x80 : 0) | (payloadType & 0x7F))
        out.put16(sequenceNumber)
        out.put32(timestamp)
        out.put32(ssrc)
        for csrc in csrcs.prefix(15) { out.put32(csrc) }
        if !extensions.isEmpty {
            let oneByte = extensions.allSatisfy { (1...14).contains($0.id) && (1...16).contains($0.data.count) }
            var block: [UInt8] = []
            for element in extensions {
                if oneByte {
                    block.append(element.id << 4 | UInt8(element.data.count - 1))
                } else {
                    block.append(element.id)
                    block.append(UInt8(min(255, element.data.count)))
                }
                block += element.data.prefix(oneByte ? 16 : 255)
            }
            while block.count % 4 != 0 { block.append(0) }
            out.put16(oneByte ? 0xBEDE : 0x1000)
            out.put16(UInt16(block.count / 4))
            out += block
        }
        out += payload
        if paddingLength > 0 {
            out += [UInt8](repeating: 0, count: paddingLength - 1)
            out.append(UInt8(paddingLength))
        }
        return out
    }

    /// The RFC 6464 client-to-mixer audio level carried in extension `id`: voice activity and
    /// level (0 loudest ... 127 silence).
    public func audioLevel(extensionId id: UInt8) -> (voice: Bool, level: UInt8)? {
        guard let element = extensions.first(where: { $0.id == id }), let byte = element.data.first else { return nil }
        return (byte & 0x80 != 0, byte & 0x7F)
    }

    /// The RFC 6464 audio level in the one-byte header extension `id` of the raw packet in
    /// `bytes`, found without parsing the rest (nil when absent or malformed).
    public static func audioLevel(in bytes: UnsafeRawBufferPointer, extensionId id: UInt8) -> (voice: Bool, level: UInt8)? {
        guard bytes.count >= 12, bytes[0] & 0x10 != 0 else { return nil }
        var offset = 12 + Int(bytes[0] & 0x0F) * 4
        guard offset + 4 <= bytes.count, bytes[offset] == 0xBE, bytes[offset + 1] == 0xDE else { return nil }
        let end = offset + 4 + (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])) * 4
        guard end <= bytes.count else { return nil }
        offset += 4
        while offset < end {
            let head = bytes[offset]
            if head == 0 {
                offset += 1
                continue
            }
            let length = Int(head & 0x0F) + 1
            guard head >> 4 != 15, offset + 1 + length <= end else { return nil }
            if head >> 4 == id { return (bytes[offset + 1] & 0x80 != 0, bytes[offset + 1] & 0x7F) }
            offset += 1 + length
        }
        return nil
    }

    /// The extension element for an RFC 6464 audio level.
    public static func audioLevelExtension(id: UInt8, voice: Bool, level: UInt8) -> Extension {
        Extension(id: id, data: [(voice ? 0x80 : 0) | min(127, level)])
    }
}
