import MajlisProtocol
import MajlisTransport
import Testing

/// Our RFC 3711 implementation against libsrtp2, both ways: the bytes must be the same.
@Suite struct SRTPTransformTests {
    let key = (0..<30).map { UInt8(($0 * 13 + 5) % 256) }

    func rtp(_ sequence: UInt16, ssrc: UInt32 = 0xCAFE, payload: [UInt8] = (0..<90).map { UInt8($0) }) -> [UInt8] {
        RTPPacket(payloadType: 111, sequenceNumber: sequence, timestamp: UInt32(sequence) &* 960, ssrc: ssrc,
                  extensions: [RTPPacket.audioLevelExtension(id: 1, voice: true, level: 20)], payload: payload).serialized()
    }

    @Test func producesWhatLibsrtpProducesAcrossASequenceWrap() throws {
        let ours = try SRTPTransform(key: key, direction: .outbound)
        let theirs = try SRTPSession(key: key, direction: .outbound)
        let receiver = try SRTPSession(key: key, direction: .inbound)
        // Start near the end of the sequence space so the rollover counter must move.
        for step in 0..<400 {
            let sequence = UInt16(truncatingIfNeeded: 65_400 + step)
            for ssrc: UInt32 in [0xCAFE, 0xBEEF] {
                let plain = rtp(sequence, ssrc: ssrc)
                let mine = try ours.protect(rtp: plain)
                #expect(mine == (try theirs.protect(rtp: plain)))
                #expect(try receiver.unprotect(srtp: mine) == plain)
            }
        }
    }

    /// Every payload length a datagram can carry, across the keystream's 16-byte blocks and the
    /// 1,024-byte chunks it is made in.
    @Test func producesWhatLibsrtpProducesForEveryLength() throws {
        let ours = try SRTPTransform(key: key, direction: .outbound)
        let theirs = try SRTPSession(key: key, direction: .outbound)
        let reader = try SRTPTransform(key: key, direction: .inbound)
        for (step, length) in (Array(0..<64) + Array(stride(from: 64, through: 1_400, by: 13)) + [1_003, 1_004, 1_005, 1_019, 1_020, 1_021]).enumerated() {
            let plain = rtp(UInt16(step), payload: (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ length) })
            let mine = try ours.protect(rtp: plain)
            #expect(mine == (try theirs.protect(rtp: plain)), "payload of \(length) bytes")
            #expect(try reader.unprotect(srtp: mine) == plain)
        }
    }

    /// A reader with a bound keeps state for at most that many SSRCs: the next is refused before
    /// any work, those it knows go on, and a forgery under a new SSRC takes no place.
    @Test func aBoundedReaderKeepsAtMostItsSSRCs() throws {
        let sender = try SRTPTransform(key: key, direction: .outbound)
        let reader = try SRTPTransform(key: key, direction: .inbound, maxStreams: 4)
        var forged = try sender.protect(rtp: rtp(1, ssrc: 100))
        forged[forged.count - 1] ^= 1
        #expect(throws: MediaError.self) { try reader.unprotect(srtp: forged) }
        for ssrc: UInt32 in 1...4 { #expect(try reader.unprotect(srtp: sender.protect(rtp: rtp(1, ssrc: ssrc))) == rtp(1, ssrc: ssrc)) }
        #expect(throws: MediaError.self) { try reader.unprotect(srtp: sender.protect(rtp: rtp(1, ssrc: 5))) }
        #expect(try reader.unprotect(srtp: sender.protect(rtp: rtp(2, ssrc: 3))) == rtp(2, ssrc: 3))
        // Unbounded (a client reading a room's speakers), every SSRC is read.
        let client = try SRTPTransform(key: key, direction: .inbound)
        for ssrc: UInt32 in 1...40 { #expect(try client.unprotect(srtp: sender.protect(rtp: rtp(3, ssrc: ssrc))) == rtp(3, ssrc: ssrc)) }
    }

    @Test func readsWhatLibsrtpProducesAndRefusesForgeriesAndReplays() throws {
        let sender = try SRTPSession(key: key, direction: .outbound)
        let ours = try SRTPTransform(key: key, direction: .inbound)
        var kept: [[UInt8]] = []
        for step in 0..<300 {
            let sequence = UInt16(truncatingIfNeeded: 65_500 + step)
            let plain = rtp(sequence)
            let secured = try sender.protect(rtp: plain)
            if step % 7 == 3 {
                kept.append(secured)  // "lost" for now; arrives late (a retransmission)
                continue
            }
            #expect(try ours.unprotect(srtp: secured) == plain)
            #expect(throws: MediaError.self) { try ours.unprotect(srtp: secured) }  // replay
        }
        for late in kept.suffix(20) { #expect((try? ours.unprotect(srtp: late)) != nil) }
        var forged = try sender.protect(rtp: rtp(9))
        forged[20] ^= 1
        #expect(throws: MediaError.self) { try ours.unprotect(srtp: forged) }
        let wrongKey = try SRTPSession(key: Array(key.reversed()), direction: .outbound)
        #expect(throws: MediaError.self) { try ours.unprotect(srtp: try wrongKey.protect(rtp: rtp(10))) }
        #expect(throws: MediaError.self) { try ours.unprotect(srtp: [0x80, 0, 1]) }
    }

    @Test func controlPacketsBothWays() throws {
        let report = RTCPPacket.serializeCompound([
            .senderReport(ssrc: 1, ntpTime: 0x1234_5678_9ABC_DEF0, rtpTime: 0, packetCount: 0, octetCount: 0, reports: [
                RTCPReportBlock(ssrc: 0xCAFE, fractionLost: 40, cumulativeLost: 3, highestSequence: 77, jitter: 12),
            ]),
            .nack(ssrc: 1, mediaSSRC: 0xCAFE, lost: [5, 6, 9]),
        ])
        let ours = try SRTPTransform(key: key, direction: .outbound)
        let theirs = try SRTPSession(key: key, direction: .inbound)
        for _ in 0..<5 { #expect(try theirs.unprotect(srtcp: try ours.protect(rtcp: report)) == report) }
        let sender = try SRTPSession(key: key, direction: .outbound)
        let reader = try SRTPTransform(key: key, direction: .inbound)
        let secured = try sender.protect(rtcp: report)
        #expect(try reader.unprotect(srtcp: secured) == report)
        #expect(throws: MediaError.self) { try reader.unprotect(srtcp: secured) }  // replay
        var forged = try sender.protect(rtcp: report)
        forged[10] ^= 1
        #expect(throws: MediaError.self) { try reader.unprotect(srtcp: forged) }
    }
}
