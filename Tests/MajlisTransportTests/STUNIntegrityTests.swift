import MajlisProtocol
import MajlisTransport
import Testing

@Suite struct STUNIntegrityTests {
    static let rfc5769Request: [UInt8] = [
        0x00, 0x01, 0x00, 0x58, 0x21, 0x12, 0xa4, 0x42, 0xb7, 0xe7, 0xa7, 0x01, 0xbc, 0x34, 0xd6, 0x86, 0xfa, 0x87, 0xdf, 0xae,
        0x80, 0x22, 0x00, 0x10, 0x53, 0x54, 0x55, 0x4e, 0x20, 0x74, 0x65, 0x73, 0x74, 0x20, 0x63, 0x6c, 0x69, 0x65, 0x6e, 0x74,
        0x00, 0x24, 0x00, 0x04, 0x6e, 0x00, 0x01, 0xff, 0x80, 0x29, 0x00, 0x08, 0x93, 0x2f, 0xf9, 0xb1, 0x51, 0x26, 0x3b, 0x36,
        0x00, 0x06, 0x00, 0x09, 0x65, 0x76, 0x74, 0x6a, 0x3a, 0x68, 0x36, 0x76, 0x59, 0x20, 0x20, 0x20,
        0x00, 0x08, 0x00, 0x14, 0x9a, 0xea, 0xa7, 0x0c, 0xbf, 0xd8, 0xcb, 0x56, 0x78, 0x1e, 0xf2, 0xb5, 0xb2, 0xd3, 0xf2, 0x49,
        0xc1, 0xb5, 0x71, 0xa2, 0x80, 0x28, 0x00, 0x04, 0xe5, 0x7a, 0x3b, 0xcf,
    ]

    @Test func stunParsesTheRFC5769Request() throws {
        #expect(STUNMessage.looksLikeSTUN(Self.rfc5769Request))
        let message = try STUNMessage(parsing: Self.rfc5769Request)
        #expect(message.type == STUNMessage.MessageType.bindingRequest.rawValue)
        #expect(message.attributes.count == 6)
        #expect(message.username == "evtj:h6vY")
        #expect(message.attribute(.messageIntegrity)?.count == 20)
        let input = try #require(STUNMessage.integrityInput(Self.rfc5769Request))
        #expect(input.count == 76)
        #expect(Array(input[2..<4]) == [0x00, 0x50])
    }

    /// RFC 5769's request carries a FINGERPRINT that this code agrees with (ICE checks need it).
    @Test func agreesWithTheRFC5769Fingerprint() {
        #expect(STUNMessage.hasValidFingerprint(Self.rfc5769Request))
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    @Test func verifiesTheRFC5769Vector() {
        #expect(STUNIntegrity.verify(Self.rfc5769Request, key: Array("VOkJxbRl1RmTxUk/WvJxBt".utf8)))
        #expect(!STUNIntegrity.verify(Self.rfc5769Request, key: Array("wrong".utf8)))
        var tampered = Self.rfc5769Request
        tampered[70] ^= 1
        #expect(!STUNIntegrity.verify(tampered, key: Array("VOkJxbRl1RmTxUk/WvJxBt".utf8)))
    }

    @Test func signsWhatItVerifies() throws {
        let key: [UInt8] = Array(repeating: 7, count: 16)
        let request = STUNMessage(type: .bindingRequest, transactionId: Array(0..<12), attributes: [.init(type: STUNMessage.AttributeType.username.rawValue, value: Array("ssrc:42".utf8))])
        let signed = STUNIntegrity.sign(request, key: key)
        #expect(STUNIntegrity.verify(signed, key: key))
        #expect(!STUNIntegrity.verify(signed, key: Array(repeating: 8, count: 16)))
        #expect(try STUNMessage(parsing: signed).username == "ssrc:42")
    }
}
