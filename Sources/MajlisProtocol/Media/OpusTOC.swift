/// What the first bytes of an Opus packet (its TOC byte and, for code 3, the frame count; RFC
/// 6716 section 3.1) say about how much audio it holds.
public enum OpusTOC {
    /// Samples at 48 kHz in a packet starting with `toc` and `next` (nil when the packet is one
    /// byte long); nil when the packet cannot be read that far.
    public static func samples(toc: UInt8, next: UInt8?) -> Int? {
        let config = Int(toc >> 3)
        let frame: Int
        switch config {
        case 0...11: frame = [480, 960, 1_920, 2_880][config % 4]  // SILK: 10, 20, 40, 60 ms
        case 12...15: frame = [480, 960][config % 2]  // hybrid: 10, 20 ms
        default: frame = [120, 240, 480, 960][config % 4]  // CELT: 2.5, 5, 10, 20 ms
        }
        switch toc & 3 {
        case 0: return frame
        case 1, 2: return 2 * frame
        default:
            guard let next else { return nil }
            return Int(next & 0x3F) * frame
        }
    }

    /// Samples at 48 kHz in the Opus payload of the plain RTP packet in `bytes` (nil when it
    /// cannot be read).
    public static func samples(inRTP bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count > 12 else { return nil }
        var offset = 12 + Int(bytes[0] & 0x0F) * 4
        if bytes[0] & 0x10 != 0 {
            guard offset + 4 <= bytes.count else { return nil }
            offset += 4 + (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])) * 4
        }
        guard offset < bytes.count else { return nil }
        return samples(toc: bytes[offset], next: offset + 1 < bytes.count ? bytes[offset + 1] : nil)
    }
}
