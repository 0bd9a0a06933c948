/// A reception report block (RFC 3550 section 6.4.1).
public struct RTCPReportBlock: Sendable, Equatable {
    public var ssrc: UInt32
    /// Fraction lost since the last report, out of 256.
    public var fractionLost: UInt8
    /// Packets lost since the start (24-bit signed).
    public var cumulativeLost: Int32
    public var highestSequence: UInt32
    /// Interarrival jitter, in timestamp units.
    public var jitter: UInt32
    public var lastSenderReport: UInt32
    public var delaySinceLastSenderReport: UInt32

    public init(ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32, highestSequence: UInt32, jitter: UInt32, lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.highestSequence = highestSequence
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    static func read(_ reader: inout ByteReader) throws(PacketError) -> RTCPReportBlock {
        let ssrc = try reader.u32()
        let lossWord = try reader.u32()
        var cumulative = Int32(bitPattern: lossWord & 0x00FF_FFFF)
        if cumulative & 0x0080_0000 != 0 { cumulative -= 0x0100_0000 }
        return RTCPReportBlock(
            ssrc: ssrc, fractionLost: UInt8(lossWord >> 24), cumulativeLost: cumulative, highestSequence: try reader.u32(),
            jitter: try reader.u32(), lastSenderReport: try reader.u32(), delaySinceLastSenderReport: try reader.u32())
    }

    func write(_ out: inout [UInt8]) {
        out.put32(ssrc)
        let clamped = max(-0x80_0000, min(0x7F_FFFF, cumulativeLost))
        out.put32(UInt32(fractionLost) << 24 | UInt32(bitPattern: clamped) & 0x00FF_FFFF)
        out.put32(highestSequence)
        out.put32(jitter)
        out.put32(lastSenderReport)
        out.put32(delaySinceLastSenderReport)
    }
}
