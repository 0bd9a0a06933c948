import MajlisProtocol
import MajlisTransport
import Testing

@Suite struct BindingChallengeTests {
    let challenge = BindingChallenge(secret: Array(repeating: 7, count: 32))
    let here = UDPAddress(host: "127.0.0.1", port: 5000)!
    let there = UDPAddress(host: "127.0.0.1", port: 5001)!

    @Test func aNonceProvesOneAddressForOneMemberForAWhile() {
        let nonce = challenge.nonce(ssrc: 9, address: here, now: 1_000_000)
        #expect(nonce.count == 20)
        #expect(challenge.verify(nonce, ssrc: 9, address: here, now: 1_000_000))
        #expect(challenge.verify(nonce, ssrc: 9, address: here, now: 1_000_000 + BindingChallenge.window))
        #expect(!challenge.verify(nonce, ssrc: 9, address: here, now: 1_000_000 + 2 * BindingChallenge.window))
        #expect(!challenge.verify(nonce, ssrc: 9, address: there, now: 1_000_000))
        #expect(!challenge.verify(nonce, ssrc: 10, address: here, now: 1_000_000))
        #expect(!BindingChallenge(secret: Array(repeating: 8, count: 32)).verify(nonce, ssrc: 9, address: here, now: 1_000_000))
        var tampered = nonce
        tampered[19] ^= 1
        #expect(!challenge.verify(tampered, ssrc: 9, address: here, now: 1_000_000))
        #expect(!challenge.verify([], ssrc: 9, address: here, now: 1_000_000))
    }

    /// The client's side answers a challenge once with the nonce, and is bound by a success.
    @Test func theClientAnswersTheChallengeWithTheNonce() throws {
        let key = Array(repeating: UInt8(3), count: 30)
        var binding = MediaBinding(ssrc: 9, key: key, receivesRED: true)
        let first = try STUNMessage(parsing: binding.request(transactionId: Array(repeating: 1, count: 12)))
        #expect(first.attribute(.nonce) == nil && first.attribute(.receivesRED) != nil)
        let nonce = challenge.nonce(ssrc: 9, address: here, now: 0)
        let refusal = STUNIntegrity.sign(STUNMessage(type: .bindingError, transactionId: first.transactionId, attributes: [
            .init(type: STUNMessage.AttributeType.errorCode.rawValue, value: STUNMessage.errorCode(401, reason: "")),
            .init(type: STUNMessage.AttributeType.nonce.rawValue, value: nonce),
        ]), key: key)
        #expect(binding.receive(refusal) == .challenged)
        #expect(binding.receive(refusal) == .ignored, "the same challenge twice is not answered twice")
        let second = try STUNMessage(parsing: binding.request(transactionId: Array(repeating: 2, count: 12)))
        #expect(second.attribute(.nonce) == nonce)
        #expect(STUNIntegrity.verify(binding.request(transactionId: Array(repeating: 2, count: 12)), key: key))
        let success = STUNIntegrity.sign(STUNMessage(type: .bindingSuccess, transactionId: second.transactionId, attributes: [
            .init(type: STUNMessage.AttributeType.xorMappedAddress.rawValue, value: STUNMessage.xorMappedAddress(ipv4: (127, 0, 0, 1), port: 5000)),
        ]), key: key)
        #expect(binding.receive(success) == .bound(mappedPort: 5000))
        #expect(binding.receive(STUNIntegrity.sign(STUNMessage(type: .bindingSuccess, transactionId: second.transactionId), key: Array(repeating: 4, count: 30))) == .ignored)
    }
}
