import MajlisProtocol
import Testing

@testable import MajlisForwarding
@testable import MajlisTransport

/// A browser's address is its own only once it has answered the router's probe: a check
/// signed with another member's own credentials, from a forged source, takes nothing away.
@Suite struct ICEAddressProofTests {
    typealias Recorder = MediaRouterCoreTests.Recorder

    /// A browser as the router sees it: its credentials, the server's for it, its address.
    struct Browser {
        let user: String
        let ssrc: UInt32
        let ice = ICECredentials.random()
        let server = ICECredentials.random()
        let address: UDPAddress

        var peer: WebRTCPeer {
            WebRTCPeer(
                local: server, peerUfrag: ice.ufrag, peerPassword: ice.password, peerFingerprint: [UInt8](repeating: 1, count: 32),
                parameters: WebRTCParameters(opusPayloadType: 111, redPayloadType: nil, audioLevelExtension: 1, sends: true, trackSSRCs: []))
        }

        func check(nominate: Bool = true) -> [UInt8] {
            ICELite.request(transactionId: MediaBinding.transactionId(), remote: server, localUfrag: ice.ufrag, nominate: nominate)
        }

        /// The answer this browser's ICE agent gives the router's probe, if it is one for it.
        func answer(_ datagram: [UInt8]) -> [UInt8]? {
            guard let request = try? STUNMessage(parsing: datagram), let check = ICELite.check(datagram, request: request, local: ice) else { return nil }
            return ICELite.success(transactionId: check.transactionId, from: address, local: ice)
        }
    }

    let core: MediaRouterCore
    var output = Recorder()
    let now = 1_000_000.0

    init() throws {
        core = MediaRouterCore(identity: try DTLSIdentity(pem: DTLSIdentity.generatePEM()))
    }

    mutating func deliver(_ bytes: [UInt8], from: UDPAddress) -> [(bytes: [UInt8], to: UDPAddress)] {
        var buffer = bytes + [UInt8](repeating: 0, count: 64)
        core.receive(&buffer, length: bytes.count, from: from, now: now, output: &output)
        return output.take()
    }

    mutating func join(_ browser: Browser) {
        core.apply(.join(room: "r", user: browser.user, ssrc: browser.ssrc, key: HMACSHA256.randomBytes(SRTPSession.keyLength)))
        core.apply(.webrtc(room: "r", user: browser.user, peer: browser.peer))
    }

    /// Checks from `browser`'s own address, answering the probe as its agent would.
    mutating func connect(_ browser: Browser) -> Bool {
        let sent = deliver(browser.check(), from: browser.address)
        guard sent.count == 2, sent.allSatisfy({ $0.to == browser.address }), let answer = browser.answer(sent[1].bytes) else { return false }
        _ = deliver(answer, from: browser.address)
        return core.byAddress[browser.address] == browser.ssrc && core.participants[browser.ssrc]?.address == browser.address
    }

    @Test mutating func aNewAddressIsSelectedOnlyOnceItAnswers() throws {
        let browser = Browser(user: "b", ssrc: 0x1111, address: UDPAddress(host: "127.0.0.1", port: 40_001)!)
        join(browser)
        // The check is answered, but the address is not used until the probe comes back.
        let sent = deliver(browser.check(), from: browser.address)
        #expect(sent.count == 2)
        #expect(ICELite.isSuccess(sent[0].bytes, remote: browser.server))
        #expect(core.byAddress[browser.address] == nil && core.participants[browser.ssrc]?.address == nil)
        // An answer signed with the wrong password, or from elsewhere, proves nothing.
        let answer = try #require(browser.answer(sent[1].bytes))
        _ = deliver(answer, from: UDPAddress(host: "127.0.0.1", port: 40_999)!)
        #expect(core.byAddress[browser.address] == nil)
        _ = deliver(answer, from: browser.address)
        #expect(core.byAddress[browser.address] == browser.ssrc && core.participants[browser.ssrc]?.address == browser.address)
        // From then on a check is simply answered.
        #expect(deliver(browser.check(), from: browser.address).count == 1)
    }

    @Test mutating func aForgedCheckCannotTakeAnotherMembersAddress() throws {
        let victim = Browser(user: "victim", ssrc: 0x2222, address: UDPAddress(host: "127.0.0.1", port: 40_002)!)
        let attacker = Browser(user: "attacker", ssrc: 0x3333, address: UDPAddress(host: "127.0.0.1", port: 40_003)!)
        join(victim)
        join(attacker)
        #expect(connect(victim))
        #expect(connect(attacker))
        // The attacker signs checks with its own credentials from the victim's address, with
        // USE-CANDIDATE, again and again; the probes go to the victim, whose agent ignores them.
        for _ in 0..<20 {
            let sent = deliver(attacker.check(), from: victim.address)
            for datagram in sent where datagram.to == victim.address { #expect(victim.answer(datagram.bytes) == nil) }
        }
        #expect(core.byAddress[victim.address] == victim.ssrc)
        #expect(core.participants[victim.ssrc]?.address == victim.address)
        #expect(core.participants[attacker.ssrc]?.address == attacker.address)
        // Nor can it send media to an address of a bystander's that never answered.
        let bystander = UDPAddress(host: "127.0.0.1", port: 40_004)!
        _ = deliver(attacker.check(), from: bystander)
        #expect(core.participants[attacker.ssrc]?.address == attacker.address && core.byAddress[bystander] == nil)
    }
}
