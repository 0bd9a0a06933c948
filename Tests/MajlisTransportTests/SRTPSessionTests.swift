import MajlisProtocol
import MajlisTransport
import Testing

@Suite struct SRTPSessionTests {
    let key = (0..<30).map { UInt8($0 * 7 % 256) }

    func rtp(_ sequence: UInt16, payload: [UInt8] = Array(repeating: 0x55, count: 80)) -> [UInt8] {
        RTPPacket(payloadType: 111, sequenceNumber: sequence, timestamp: UInt32(sequence) * 960, ssrc: 0xCAFE,
                  extensions: [RTPPacket.audioLevelExtension(id: 1, voice: true, level: 20)], payload: payload).serialized()
    }

    @Test func protectThenUnprotect() throws {
        let sender = try SRTPSession(key: key, direction: .outbound)
        let receiver = try SRTPSession(key: key, direction: .inbound)
        for sequence in UInt16(1)...50 {
            let plain = rtp(sequence)
            let secured = try sender.protect(rtp: plain)
            #expect(secured.count == plain.count + 10)  // HMAC-SHA1-80 tag
            #expect(Array(secured[0..<12]) == Array(plain[0..<12]))  // header in the clear (routing reads it)
            #expect(Array(secured.suffix(from: 20).prefix(40)) != Array(plain.suffix(from: 20).prefix(40)))  // payload encrypted
            #expect(try receiver.unprotect(srtp: secured) == plain)
        }
        let report = RTCPPacket.serializeCompound([.receiverReport(ssrc: 0xCAFE, reports: [])])
        let securedReport = try sender.protect(rtcp: report)
        #expect(try receiver.unprotect(srtcp: securedReport) == report)
    }

    @Test func tamperingWrongKeysAndReplaysAreRejected() throws {
        let sender = try SRTPSession(key: key, direction: .outbound)
        let receiver = try SRTPSession(key: key, direction: .inbound)
        let secured = try sender.protect(rtp: rtp(7))
        var tampered = secured
        tampered[30] ^= 0x01
        #expect(throws: MediaError.self) { try receiver.unprotect(srtp: tampered) }
        let stranger = try SRTPSession(key: Array(repeating: 1, count: 30), direction: .inbound)
        #expect(throws: MediaError.self) { try stranger.unprotect(srtp: secured) }
        #expect(try receiver.unprotect(srtp: secured).count > 0)
        #expect(throws: MediaError.self) { try receiver.unprotect(srtp: secured) }  // replay
        #expect(throws: MediaError.self) { try receiver.unprotect(srtp: [1, 2, 3]) }
        #expect(throws: MediaError.self) { try SRTPSession(key: [1, 2, 3], direction: .inbound) }
    }
}
