import MajlisTransport
/// A browser member's transport state in the router: ICE-lite checks, the DTLS association,
/// the SRTP sessions its keys make, and one rewriter per seat track. Owned by the router's
/// thread.
final class WebRTCLeg {
    let peer: WebRTCPeer
    var parameters: WebRTCParameters
    /// Addresses that passed a check and answered the server's probe, and when they last
    /// passed a check (at most `maxAddresses`).
    var checked: [UDPAddress: Double] = [:]
    /// An address a valid check came from that has not yet answered the server's probe: the
    /// probe's transaction, when it went, whether the check nominated the path, and DTLS
    /// datagrams from there held until it answers.
    struct Unproven {
        var transactionId: [UInt8]
        var sentAt: Double
        var nominated: Bool
        var held: [[UInt8]] = []
    }
    var unproven: [UDPAddress: Unproven] = [:]
    /// ICE-CONTROLLED's tie-breaker in the server's probes (RFC 8445 section 7.1.3).
    let tieBreaker = HMACSHA256.randomBytes(8)
    /// When the selected path last passed a check (consent, RFC 7675).
    var consentAt: Double = 0
    let dtls: DTLSAssociation
    var inbound: SRTPTransform?
    var outbound: SRTPTransform?
    /// The SSRC the browser sends its microphone with (learned from its packets).
    var peerSSRC: UInt32?
    var tracks: [TrackRewriter]

    /// Consent expires this long after the last check from the selected path.
    static let consentLifetime = 30_000.0
    static let maxAddresses = 8
    /// A probe to an address is sent again after this long, at the next check from there.
    static let probeInterval = 250.0
    /// DTLS datagrams held per unproven address.
    static let maxHeld = 4

    init(peer: WebRTCPeer, identity: DTLSIdentity) throws(MediaError) {
        self.peer = peer
        parameters = peer.parameters
        dtls = try DTLSAssociation(identity: identity, peerFingerprint: peer.peerFingerprint)
        tracks = peer.parameters.trackSSRCs.map(TrackRewriter.init)
    }

    /// Takes new parameters from a renegotiation on the same transport; tracks that stay keep
    /// their continuity.
    func update(_ parameters: WebRTCParameters) {
        self.parameters = parameters
        tracks = parameters.trackSSRCs.enumerated().map { index, ssrc in index < tracks.count && tracks[index].ssrc == ssrc ? tracks[index] : TrackRewriter(ssrc: ssrc) }
    }

    func hasConsent(at now: Double) -> Bool { now - consentAt <= Self.consentLifetime }
}
