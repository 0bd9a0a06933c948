import FuzzDriver
import MajlisForwarding
import MajlisProtocol
import MajlisTransport

/// Any bytes as an SDP offer (whatever is accepted is answered, and the answer is valid SDP),
/// and as a datagram to the media router from a browser that passed its ICE check: STUN, DTLS
/// (through OpenSSL), SRTP and SRTCP paths must drop what they cannot use.
struct Discard: RouterOutput {
    /// What the router sent with `send` (answers and probes), kept.
    var sent: [[UInt8]] = []
    mutating func send(_ bytes: [UInt8], to address: UDPAddress) { sent.append(bytes) }
    mutating func forward(to address: UDPAddress, _ fill: (UnsafeMutableRawBufferPointer) -> Int?) {}
    mutating func flush() -> Int { 0 }
}

let identity = try! DTLSIdentity(pem: DTLSIdentity.generatePEM())
let browser = UDPAddress(host: "127.0.0.1", port: 40_000)!
let local = ICECredentials(ufrag: "srv1", password: "0123456789abcdefghijklmn")
let peer = ICECredentials(ufrag: "peer", password: "peer-password-0123456789")

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzWebRTC(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: bytes, count: count))
    if let offer = try? WebRTCOffer(sdp: String(decoding: input, as: UTF8.self)) {
        let answer = WebRTCAnswer(offer: offer, seats: 4, ice: local, fingerprint: identity.fingerprintText, host: "127.0.0.1", port: 7882)
        precondition((try? SessionDescription(parsing: answer.sdp)) != nil)
    }
    let core = MediaRouterCore(identity: identity)
    var output = Discard()
    let parameters = WebRTCParameters(opusPayloadType: 111, redPayloadType: 63, audioLevelExtension: 1, sends: true, trackSSRCs: [0x4D4A_0000])
    core.apply(.join(room: "r", user: "b", ssrc: 7, key: [UInt8](repeating: 1, count: 30)))
    core.apply(.webrtc(room: "r", user: "b", peer: WebRTCPeer(local: local, peerUfrag: peer.ufrag, peerPassword: peer.password, peerFingerprint: identity.fingerprint, parameters: parameters)))
    core.apply(.setSpeakers(room: "r", seats: ["b": 0]))
    var check = ICELite.request(transactionId: [UInt8](repeating: 3, count: 12), remote: local, localUfrag: "peer", nominate: true)
    core.receive(&check, length: check.count, from: browser, now: 1_000, output: &output)
    precondition(core.counters.bindings == 1 && output.sent.count == 2)
    // The browser answers the router's probe: its address is proven.
    let probe = output.sent[1]
    var answer = ICELite.success(transactionId: Array(probe[8..<20]), from: browser, local: peer)
    precondition(ICELite.check(probe, request: try! STUNMessage(parsing: probe), local: peer) != nil)
    core.receive(&answer, length: answer.count, from: browser, now: 1_000, output: &output)
    var datagram = input + [UInt8](repeating: 0, count: 16)
    core.receive(&datagram, length: input.count, from: browser, now: 1_001, output: &output)
    return 0
}

runFuzzer(fuzzWebRTC)
