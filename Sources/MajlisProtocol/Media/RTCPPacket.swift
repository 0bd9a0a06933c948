/// The RTCP packets Majlis uses (RFC 3550, RFC 4585, and REMB from
/// draft-alvestrand-rmcat-remb), read from and written to compound packets.
public enum RTCPPacket: Sendable, Equatable {
    case senderReport(ssrc: UInt32, ntpTime: UInt64, rtpTime: UInt32, packetCount: UInt32, octetCount: UInt32, reports: [RTCPReportBlock])
    case receiverReport(ssrc: UInt32, reports: [RTCPReportBlock])
    /// Generic NACK: the sender `ssrc` asks `mediaSSRC` for these sequence numbers again.
    case nack(ssrc: UInt32, mediaSSRC: UInt32, lost: [UInt16])
    case bye(ssrcs: [UInt32])
    /// Receiver estimated maximum bitrate (REMB): the sender `ssrc` says the streams `ssrcs`
    /// should send at most `bitrate` bits per second in all, IP and UDP headers counted.
    case estimatedBitrate(ssrc: UInt32, bitrate: UInt64, ssrcs: [UInt32])
    /// Any other packet type, kept as it came.
    case other(type: UInt8, count: UInt8, body: [UInt8])

    /// Reads every packet of a compound RTCP packet.
    public static func parseCompound(_ bytes: [UInt8]) throws(PacketError) -> [RTCPPacket] {
        var reader = ByteReader(bytes)
        var packets: [RTCPPacket] = []
        while reader.remaining > 0 {
            let first = try reader.u8()
            guard first >> 6 == 2 else { throw PacketError.badVersion(first >> 6) }
            let count = first & 0x1F
            let type = try reader.u8()
            let length = Int(try reader.u16()) * 4
            var bodyBytes = try reader.take(length)
            if first & 0x20 != 0 {
                guard let pad = bodyBytes.last, pad > 0, Int(pad) <= bodyBytes.count else { throw PacketError.malformed("bad RTCP padding") }
                bodyBytes.removeLast(Int(pad))
            }
            var body = ByteReader(bodyBytes)
            switch type {
            case 200:
                let ssrc = try body.u32()
                let ntp = UInt64(try body.u32()) << 32 | UInt64(try body.u32())
                let rtpTime = try body.u32()
                let packetCount = try body.u32()
                let octetCount = try body.u32()
                var reports: [RTCPReportBlock] = []
                for _ in 0..<count { reports.append(try RTCPReportBlock.read(&body)) }
                packets.append(.senderReport(ssrc: ssrc, ntpTime: ntp, rtpTime: rtpTime, packetCount: packetCount, octetCount: octetCount, reports: reports))
            case 201:
                let ssrc = try body.u32()
                var reports: [RTCPReportBlock] = []
                for _ in 0..<count { reports.append(try RTCPReportBlock.read(&body)) }
                packets.append(.receiverReport(ssrc: ssrc, reports: reports))
            case 203:
                var ssrcs: [UInt32] = []
                for _ in 0..<count { ssrcs.append(try body.u32()) }
                packets.append(.bye(ssrcs: ssrcs))
            case 205 where count == 1:
                let ssrc = try body.u32()
                let media = try body.u32()
                var lost: [UInt16] = []
                while body.remaining >= 4 {
                    let pid = try body.u16()
                    let mask = try body.u16()
                    lost.append(pid)
                    for bit in 0..<16 where mask & (1 << bit) != 0 { lost.append(pid &+ UInt16(bit + 1)) }
                }
                packets.append(.nack(ssrc: ssrc, mediaSSRC: media, lost: lost))
            case 206 where count == 15 && bodyBytes.count >= 16 && Array(bodyBytes[8..<12]) == Self.rembIdentifier:
                let ssrc = try body.u32()
                _ = try body.take(8)  // media SSRC (unused), "REMB"
                let listed = Int(try body.u8())
                let exponentAndMantissa = UInt32(try body.u8()) << 16 | UInt32(try body.u16())
                let bitrate = UInt64(exponentAndMantissa & 0x3FFFF) << UInt64(exponentAndMantissa >> 18)
                var ssrcs: [UInt32] = []
                for _ in 0..<listed { ssrcs.append(try body.u32()) }
                packets.append(.estimatedBitrate(ssrc: ssrc, bitrate: bitrate, ssrcs: ssrcs))
            default:
                packets.append(.other(type: type, count: count, body: bodyBytes))
            }
        }
        return packets
    }

    /// Writes packets as one compound packet.
    public static func serializeCompound(_ packets: [RTCPPacket]) -> [UInt8] {
        var out: [UInt8] = []
        for packet in packets { packet.write(&out) }
        return out
    }

    func write(_ out: inout [UInt8]) {
        var body: [UInt8] = []
        let count: UInt8
        let type: UInt8
        switch self {
        case .senderReport(let ssrc, let ntp, let rtpTime, let packetCount, let octetCount, let reports):
            type = 200
            count = UInt8(min(31, reports.count))
            body.put32(ssrc)
            body.put32(UInt32(ntp >> 32))
            body.put32(UInt32(ntp & 0xFFFF_FFFF))
            body.put32(rtpTime)
            body.put32(packetCount)
            body.put32(octetCount)
            for report in reports.prefix(31) { report.write(&body) }
        case .receiverReport(let ssrc, let reports):
            type = 201
            count = UInt8(min(31, reports.count))
            body.put32(ssrc)
            for report in reports.prefix(31) { report.write(&body) }
        case .nack(let ssrc, let media, let lost):
            type = 205
            count = 1
            body.put32(ssrc)
            body.put32(media)
            for (pid, mask) in Self.nackItems(lost) {
                body.put16(pid)
                body.put16(mask)
            }
        case .bye(let ssrcs):
            type = 203
            count = UInt8(min(31, ssrcs.count))
            for ssrc in ssrcs.prefix(31) { body.put32(ssrc) }
        case .estimatedBitrate(let ssrc, let bitrate, let ssrcs):
            type = 206
            count = 15
            body.put32(ssrc)
            body.put32(0)
            body += Self.rembIdentifier
            body.append(UInt8(min(255, ssrcs.count)))
            // 18 bits of mantissa, 6 of exponent (rounded down to what fits).
            var mantissa = bitrate
            var exponent: UInt64 = 0
            while mantissa > 0x3FFFF && exponent < 63 {
                mantissa >>= 1
                exponent += 1
            }
            let packed = UInt32(exponent) << 18 | UInt32(min(mantissa, 0x3FFFF))
            body.append(UInt8(packed >> 16))
            body.put16(UInt16(packed & 0xFFFF))
            for listed in ssrcs.prefix(255) { body.put32(listed) }
        case .other(let otherType, let otherCount, let otherBody):
            type = otherType
            count = otherCount & 0x1F
            body = otherBody
        }
        while body.count % 4 != 0 { body.append(0) }
        out.append(0x80 | count)
        out.append(type)
        out.put16(UInt16(body.count / 4))
        out += body
    }

    static let rembIdentifier: [UInt8] = Array("REMB".utf8)

    /// Packs sequence numbers into (PID, bitmask) pairs.
    static func nackItems(_ lost: [UInt16]) -> [(UInt16, UInt16)] {
        var items: [(UInt16, UInt16)] = []
        for sequence in lost {
            if let last = items.last {
                let distance = sequence &- last.0
                if distance >= 1 && distance <= 16 {
                    items[items.count - 1].1 |= 1 << (distance - 1)
                    continue
                }
            }
            items.append((sequence, 0))
        }
        return items
    }
}
