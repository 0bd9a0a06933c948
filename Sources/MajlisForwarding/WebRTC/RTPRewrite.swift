import MajlisTransport
/// In-place edits of a plain RTP packet's header, for the router's per-peer rewriting: payload
/// type, sequence number, timestamp, SSRC, a one-byte header extension's id (RFC 8285), and the
/// payload types inside a RED payload (RFC 2198). Nothing is allocated; malformed packets are
/// left as they are (and `false` returned).
public enum RTPRewrite {
    public static func setPayloadType(_ packet: UnsafeMutableRawBufferPointer, _ type: UInt8) {
        packet[1] = packet[1] & 0x80 | type & 0x7F
    }

    public static func setSequence(_ packet: UnsafeMutableRawBufferPointer, _ sequence: UInt16) {
        packet[2] = UInt8(sequence >> 8)
        packet[3] = UInt8(sequence & 0xFF)
    }

    public static func setTimestamp(_ packet: UnsafeMutableRawBufferPointer, _ timestamp: UInt32) {
        put32(packet, at: 4, timestamp)
    }

    public static func setSSRC(_ packet: UnsafeMutableRawBufferPointer, _ ssrc: UInt32) {
        put32(packet, at: 8, ssrc)
    }

    private static func put32(_ packet: UnsafeMutableRawBufferPointer, at offset: Int, _ value: UInt32) {
        packet[offset] = UInt8(value >> 24)
        packet[offset + 1] = UInt8(value >> 16 & 0xFF)
        packet[offset + 2] = UInt8(value >> 8 & 0xFF)
        packet[offset + 3] = UInt8(value & 0xFF)
    }

    /// Where the payload starts (after CSRCs and the extension block), or nil if malformed.
    public static func payloadOffset(_ packet: UnsafeMutableRawBufferPointer, length: Int) -> Int? {
        guard length >= 12, length <= packet.count else { return nil }
        var offset = 12 + Int(packet[0] & 0x0F) * 4
        if packet[0] & 0x10 != 0 {
            guard offset + 4 <= length else { return nil }
            offset += 4 + (Int(packet[offset + 2]) << 8 | Int(packet[offset + 3])) * 4
        }
        return offset <= length ? offset : nil
    }

    /// Changes one-byte header extension elements with id `from` to id `to`.
    @discardableResult
    public static func renameExtension(_ packet: UnsafeMutableRawBufferPointer, length: Int, from: UInt8, to: UInt8) -> Bool {
        guard from != to, length >= 16, packet[0] & 0x10 != 0 else { return from == to }
        let start = 12 + Int(packet[0] & 0x0F) * 4
        guard start + 4 <= length, packet[start] == 0xBE, packet[start + 1] == 0xDE else { return false }
        let end = start + 4 + (Int(packet[start + 2]) << 8 | Int(packet[start + 3])) * 4
        guard end <= length else { return false }
        var offset = start + 4
        while offset < end {
            let byte = packet[offset]
            if byte == 0 {  // padding
                offset += 1
                continue
            }
            let id = byte >> 4
            guard id != 15 else { return true }
            if id == from { packet[offset] = to << 4 | byte & 0x0F }
            offset += 1 + Int(byte & 0x0F) + 1
        }
        return true
    }

    /// Changes the payload type `from` to `to` in every block header of the RED payload.
    @discardableResult
    public static func renameREDBlocks(_ packet: UnsafeMutableRawBufferPointer, length: Int, from: UInt8, to: UInt8) -> Bool {
        guard from != to else { return true }
        guard var offset = payloadOffset(packet, length: length) else { return false }
        while offset < length {
            let header = packet[offset]
            if header & 0x7F == from { packet[offset] = header & 0x80 | to }
            guard header & 0x80 != 0 else { return true }  // the primary's one-byte header ends the list
            offset += 4
        }
        return false
    }
}
