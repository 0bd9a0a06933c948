/// Big-endian reads over a byte array that throw, never trap, when the data runs out.
struct ByteReader {
    let bytes: [UInt8]
    var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    func need(_ count: Int) throws(PacketError) {
        if count < 0 || remaining < count { throw PacketError.tooShort(needed: offset + max(0, count), got: bytes.count) }
    }

    mutating func u8() throws(PacketError) -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() throws(PacketError) -> UInt16 {
        try need(2)
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    mutating func u32() throws(PacketError) -> UInt32 {
        try need(4)
        defer { offset += 4 }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    mutating func take(_ count: Int) throws(PacketError) -> [UInt8] {
        try need(count)
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func skip(_ count: Int) throws(PacketError) {
        try need(count)
        offset += count
    }
}

extension Array where Element == UInt8 {
    /// Appends a big-endian 16-bit value.
    public mutating func put16(_ value: UInt16) { append(contentsOf: [UInt8(value >> 8), UInt8(value & 0xFF)]) }
    /// Appends a big-endian 32-bit value.
    public mutating func put32(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }
}
