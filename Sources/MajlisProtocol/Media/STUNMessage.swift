/// A STUN message (RFC 5389): the binding handshake by which a client proves it owns its UDP
/// address. Pure codec; MESSAGE-INTEGRITY is computed by the transport (HMAC-SHA1), which signs
/// `bytesForIntegrity()`.
public struct STUNMessage: Sendable, Equatable {
    public static let magicCookie: UInt32 = 0x2112_A442

    /// Message types Majlis uses.
    public enum MessageType: UInt16, Sendable {
        case bindingRequest = 0x0001
        case bindingSuccess = 0x0101
        case bindingError = 0x0111
        case bindingIndication = 0x0011
    }

    /// Attribute types.
    public enum AttributeType: UInt16, Sendable {
        case username = 0x0006
        case messageIntegrity = 0x0008
        case errorCode = 0x0009
        case nonce = 0x0015
        case xorMappedAddress = 0x0020
        case priority = 0x0024
        case useCandidate = 0x0025
        case fingerprint = 0x8028
        case iceControlled = 0x8029
        case iceControlling = 0x802A
        /// Majlis (comprehension-optional range): the client decodes RED (RFC 2198) packets.
        case receivesRED = 0xC0DE
        /// Majlis: the client plays Opus packets of more than one 20 ms frame.
        case receivesMultiframe = 0xC0DF
        /// Majlis: one packet of a probe train (`UplinkProbe`), padded.
        case probe = 0xC0E0
    }

    /// One attribute, raw.
    public struct Attribute: Sendable, Equatable {
        public var type: UInt16
        public var value: [UInt8]
        public init(type: UInt16, value: [UInt8]) {
            self.type = type
            self.value = value
        }
    }

    public var type: UInt16
    /// 12 bytes.
    public var transactionId: [UInt8]
    public var attributes: [Attribute]

    public init(type: MessageType, transactionId: [UInt8], attributes: [Attribute] = []) {
        self.type = type.rawValue
        self.transactionId = transactionId
        self.attributes = attributes
    }

    /// Whether the first bytes of a UDP datagram look like STUN (and not RTP/RTCP): the top two
    /// bits are zero and the magic cookie is in place.
    public static func looksLikeSTUN(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 20 && bytes[0] & 0xC0 == 0 && bytes[4] == 0x21 && bytes[5] == 0x12 && bytes[6] == 0xA4 && bytes[7] == 0x42
    }

    public init(parsing bytes: [UInt8]) throws(PacketError) {
        var reader = ByteReader(bytes)
        type = try reader.u16()
        guard type & 0xC000 == 0 else { throw PacketError.malformed("not a STUN message") }
        let length = Int(try reader.u16())
        guard try reader.u32() == Self.magicCookie else { throw PacketError.malformed("no STUN magic cookie") }
        transactionId = try reader.take(12)
        guard length % 4 == 0 else { throw PacketError.malformed("STUN length is not a multiple of 4") }
        try reader.need(length)
        var attributes: [Attribute] = []
        let end = 20 + length
        while reader.offset < end {
            let attributeType = try reader.u16()
            let attributeLength = Int(try reader.u16())
            let value = try reader.take(attributeLength)
            try reader.skip((4 - attributeLength % 4) % 4)
            attributes.append(Attribute(type: attributeType, value: value))
        }
        self.attributes = attributes
    }

    /// The wire bytes.
    public func serialized() -> [UInt8] {
        var body: [UInt8] = []
        for attribute in attributes {
            body.put16(attribute.type)
            body.put16(UInt16(attribute.value.count))
            body += attribute.value
            body += [UInt8](repeating: 0, count: (4 - attribute.value.count % 4) % 4)
        }
        var out: [UInt8] = []
        out.put16(type)
        out.put16(UInt16(body.count))
        out.put32(Self.magicCookie)
        out += transactionId.prefix(12)
        out += [UInt8](repeating: 0, count: max(0, 12 - transactionId.count))
        return out + body
    }

    public func attribute(_ type: AttributeType) -> [UInt8]? {
        attributes.first { $0.type == type.rawValue }?.value
    }

    public var username: String? { attribute(.username).map { String(decoding: $0, as: UTF8.self) } }

    /// The ERROR-CODE value (RFC 5389 section 15.6) for `code` (300-699) and a reason.
    public static func errorCode(_ code: Int, reason: String) -> [UInt8] {
        [0, 0, UInt8(code / 100), UInt8(code % 100)] + Array(reason.utf8)
    }

    /// The error code of an error response (300-699), if it carries one.
    public var errorCode: Int? {
        guard let value = attribute(.errorCode), value.count >= 4 else { return nil }
        return Int(value[2] & 0x07) * 100 + Int(value[3])
    }

    /// What MESSAGE-INTEGRITY is computed over, taken from the raw datagram: the bytes before
    /// that attribute, with the header's length counting up to the end of it (RFC 5389 section
    /// 15.4). For a message without the attribute yet (one about to be signed): all of it.
    public static func integrityInput(_ raw: [UInt8]) -> [UInt8]? {
        guard raw.count >= 20 else { return nil }
        var offset = 20
        while offset + 4 <= raw.count {
            let type = UInt16(raw[offset]) << 8 | UInt16(raw[offset + 1])
            let length = Int(UInt16(raw[offset + 2]) << 8 | UInt16(raw[offset + 3]))
            if type == AttributeType.messageIntegrity.rawValue { break }
            offset += 4 + length + (4 - length % 4) % 4
        }
        guard offset <= raw.count else { return nil }
        var input = Array(raw[..<offset])
        let length = offset - 20 + 24
        input[2] = UInt8(length >> 8)
        input[3] = UInt8(length & 0xFF)
        return input
    }

    /// `raw` (a whole message) with a FINGERPRINT attribute appended (RFC 5389 section 15.5):
    /// CRC-32 of everything before it, with the length counting it, XOR 0x5354554E.
    public static func appendingFingerprint(_ raw: [UInt8]) -> [UInt8] {
        guard raw.count >= 20 else { return raw }
        var out = raw
        let length = raw.count - 20 + 8
        out[2] = UInt8(length >> 8)
        out[3] = UInt8(length & 0xFF)
        let crc = CRC32.checksum(out) ^ 0x5354_554E
        out.put16(AttributeType.fingerprint.rawValue)
        out.put16(4)
        out.put32(crc)
        return out
    }

    /// Whether `raw` ends with a FINGERPRINT attribute that matches the rest of it.
    public static func hasValidFingerprint(_ raw: [UInt8]) -> Bool {
        guard raw.count >= 28 else { return false }
        let start = raw.count - 8
        guard UInt16(raw[start]) << 8 | UInt16(raw[start + 1]) == AttributeType.fingerprint.rawValue, raw[start + 2] == 0, raw[start + 3] == 4 else { return false }
        let stored = UInt32(raw[start + 4]) << 24 | UInt32(raw[start + 5]) << 16 | UInt32(raw[start + 6]) << 8 | UInt32(raw[start + 7])
        return CRC32.checksum(raw[..<start]) ^ 0x5354_554E == stored
    }

    /// The XOR-MAPPED-ADDRESS value for an IPv4 address and port.
    public static func xorMappedAddress(ipv4: (UInt8, UInt8, UInt8, UInt8), port: UInt16) -> [UInt8] {
        let cookie = magicCookie
        let xport = port ^ UInt16(cookie >> 16)
        return [0, 0x01, UInt8(xport >> 8), UInt8(xport & 0xFF),
                ipv4.0 ^ UInt8(cookie >> 24), ipv4.1 ^ UInt8(cookie >> 16 & 0xFF), ipv4.2 ^ UInt8(cookie >> 8 & 0xFF), ipv4.3 ^ UInt8(cookie & 0xFF)]
    }

    /// The IPv4 address and port in an XOR-MAPPED-ADDRESS value.
    public static func decodeXorMappedAddress(_ value: [UInt8]) -> (ipv4: (UInt8, UInt8, UInt8, UInt8), port: UInt16)? {
        guard value.count == 8, value[1] == 0x01 else { return nil }
        let cookie = magicCookie
        let port = (UInt16(value[2]) << 8 | UInt16(value[3])) ^ UInt16(cookie >> 16)
        return ((value[4] ^ UInt8(cookie >> 24), value[5] ^ UInt8(cookie >> 16 & 0xFF), value[6] ^ UInt8(cookie >> 8 & 0xFF), value[7] ^ UInt8(cookie & 0xFF)), port)
    }
}
