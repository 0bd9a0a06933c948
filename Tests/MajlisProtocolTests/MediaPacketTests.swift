import MajlisProtocol
import Testing

@Suite struct MediaPacketTests {
    @Test func rtpRoundTripWithAudioLevel() throws {
        let packet = RTPPacket(
            marker: true, payloadType: 111, sequenceNumber: 65_535, timestamp: 0xDEAD_BEEF, ssrc: 0x1234_5678,
            extensions: [RTPPacket.audioLevelExtension(id: 1, voice: true, level: 30)], payload: [1, 2, 3, 4, 5])
        let bytes = packet.serialized()
        #expect(bytes[0] == 0x90 && bytes[1] == 0x80 | 111)
        #expect(Array(bytes[12..<14]) == [0xBE, 0xDE])
        let parsed = try RTPPacket(parsing: bytes)
        #expect(parsed == packet)
        #expect(parsed.audioLevel(extensionId: 1)! == (true, 30))
        #expect(parsed.audioLevel(extensionId: 2) == nil)
        // Two-byte extensions, CSRCs and padding survive too.
        let big = RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, csrcs: [7, 8],
                            extensions: [.init(id: 20, data: Array(repeating: 9, count: 20))], payload: [42], paddingLength: 3)
        #expect(try RTPPacket(parsing: big.serialized()) == big)
    }

    @Test func rtpRefusesBadInput() {
        #expect(throws: PacketError.self) { try RTPPacket(parsing: []) }
        #expect(throws: PacketError.self) { try RTPPacket(parsing: [0x40] + [UInt8](repeating: 0, count: 11)) }
        #expect(throws: PacketError.self) { try RTPPacket(parsing: [0x8F] + [UInt8](repeating: 0, count: 20)) }  // 15 CSRCs missing
        #expect(throws: PacketError.self) { try RTPPacket(parsing: [0xA0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 9]) }  // padding longer than payload
    }

    @Test func rtcpCompoundRoundTrip() throws {
        let report = RTCPReportBlock(ssrc: 5, fractionLost: 51, cumulativeLost: -3, highestSequence: 70_000, jitter: 240, lastSenderReport: 9, delaySinceLastSenderReport: 10)
        let packets: [RTCPPacket] = [
            .senderReport(ssrc: 1, ntpTime: 0x1122_3344_5566_7788, rtpTime: 48_000, packetCount: 50, octetCount: 4000, reports: [report]),
            .receiverReport(ssrc: 2, reports: [report, report]),
            .nack(ssrc: 2, mediaSSRC: 5, lost: [100, 101, 116, 117, 300]),
            .bye(ssrcs: [2]),
            .other(type: 202, count: 0, body: [1, 2, 3, 4]),
        ]
        #expect(try RTCPPacket.parseCompound(RTCPPacket.serializeCompound(packets)) == packets)
    }

    @Test func estimatedBitrateRoundTripsAndRoundsDown() throws {
        // REMB: an 18-bit mantissa and a 6-bit exponent.
        let packets: [RTCPPacket] = [.estimatedBitrate(ssrc: 1, bitrate: 34_000, ssrcs: [7]), .estimatedBitrate(ssrc: 1, bitrate: 262_143, ssrcs: [7, 8])]
        let bytes = RTCPPacket.serializeCompound(packets)
        #expect(Array(bytes[0..<2]) == [0x8F, 206] && Array(bytes[12..<16]) == Array("REMB".utf8))
        #expect(try RTCPPacket.parseCompound(bytes) == packets)
        let big = try RTCPPacket.parseCompound(RTCPPacket.serializeCompound([.estimatedBitrate(ssrc: 1, bitrate: 10_000_001, ssrcs: [])]))
        guard case .estimatedBitrate(_, let bitrate, _) = big.first else { Issue.record("not REMB: \(big)"); return }
        #expect(bitrate <= 10_000_001 && bitrate > 9_999_900)
        // Another payload-specific feedback stays as it came.
        let pli = RTCPPacket.other(type: 206, count: 1, body: [0, 0, 0, 1, 0, 0, 0, 2])
        #expect(try RTCPPacket.parseCompound(RTCPPacket.serializeCompound([pli])) == [pli])
    }

    @Test func nackPacksIntoBitmasks() throws {
        let bytes = RTCPPacket.serializeCompound([.nack(ssrc: 1, mediaSSRC: 2, lost: [10, 11, 26, 27])])
        // 10..26 fit one item (PID 10, bits for 11 and 26); 27 starts another.
        #expect(bytes.count == 12 + 8)
        #expect(Array(bytes[12..<16]) == [0, 10, 0x80, 0x01])
        #expect(try RTCPPacket.parseCompound(bytes) == [.nack(ssrc: 1, mediaSSRC: 2, lost: [10, 11, 26, 27])])
    }

    @Test func xorMappedAddressRoundTrip() {
        let value = STUNMessage.xorMappedAddress(ipv4: (192, 0, 2, 1), port: 32_853)
        #expect(value == [0x00, 0x01, 0xa1, 0x47, 0xe1, 0x12, 0xa6, 0x43])  // RFC 5769 section 2.2
        let decoded = STUNMessage.decodeXorMappedAddress(value)
        #expect(decoded?.port == 32_853)
        #expect(decoded.map { [$0.ipv4.0, $0.ipv4.1, $0.ipv4.2, $0.ipv4.3] } == [192, 0, 2, 1])
    }

    @Test func redundantAudioRoundTrips() throws {
        let red = REDPayload(
            redundant: [.init(payloadType: 111, timestampOffset: 1_920, data: [1, 2]), .init(payloadType: 111, timestampOffset: 960, data: Array(repeating: 3, count: 300))],
            primaryPayloadType: 111, primary: [4, 5, 6])
        let bytes = red.serialized()
        // RFC 2198 headers: F bit, PT, 14-bit offset, 10-bit length; then a one-byte last header.
        let offset = 1_920
        #expect(Array(bytes.prefix(4)) == [0x80 | 111, UInt8(offset >> 6), UInt8(offset & 0x3F) << 2, 2])
        #expect(bytes[8] == 111)
        #expect(try REDPayload(parsing: bytes) == red)
        // No redundancy: one header byte and the primary.
        #expect(REDPayload(redundant: [], primaryPayloadType: 111, primary: [7]).serialized() == [111, 7])
        // A block the headers cannot describe is left out rather than mangled.
        let tooOld = REDPayload(redundant: [.init(payloadType: 111, timestampOffset: 20_000, data: [1])], primaryPayloadType: 111, primary: [2])
        #expect(try REDPayload(parsing: tooOld.serialized()).redundant.isEmpty)
        // A block longer than what follows is an error.
        #expect(throws: PacketError.self) { try REDPayload(parsing: [0x80 | 111, 0, 0, 50, 111, 1]) }
    }

    @Test func randomAndTruncatedBytesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        let seeds: [[UInt8]] = [
            RTPPacket(payloadType: 111, sequenceNumber: 1, timestamp: 2, ssrc: 3, extensions: [RTPPacket.audioLevelExtension(id: 1, voice: false, level: 90)], payload: [1, 2, 3]).serialized(),
            RTCPPacket.serializeCompound([.receiverReport(ssrc: 1, reports: [RTCPReportBlock(ssrc: 2, fractionLost: 0, cumulativeLost: 0, highestSequence: 0, jitter: 0)]), .nack(ssrc: 1, mediaSSRC: 2, lost: [5])]),
            STUNMessage(type: .bindingRequest, transactionId: Array(0..<12), attributes: [
                .init(type: STUNMessage.AttributeType.username.rawValue, value: Array("12345".utf8)),
                .init(type: STUNMessage.AttributeType.messageIntegrity.rawValue, value: Array(repeating: 7, count: 20)),
            ]).serialized(),
            REDPayload(redundant: [.init(payloadType: 111, timestampOffset: 960, data: [9, 9])], primaryPayloadType: 111, primary: [1]).serialized(),
        ]
        for _ in 0..<20_000 {
            var bytes = seeds.randomElement(using: &generator)!
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            case 1:
                for _ in 0..<Int.random(in: 1...6, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            default: bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            _ = try? RTPPacket(parsing: bytes)
            _ = try? RTCPPacket.parseCompound(bytes)
            _ = try? STUNMessage(parsing: bytes)
            _ = try? REDPayload(parsing: bytes)
            _ = STUNMessage.integrityInput(bytes)
            _ = STUNMessage.looksLikeSTUN(bytes)
        }
    }
}
