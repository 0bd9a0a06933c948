/// A browser member's transport state in the router: ICE-lite checks, the DTLS association,
/// the SRTP sessions its keys make, and one rewriter per seat track. Owned by the router's
/// thread.
final class WebRTCLeg {
    let peer: WebRTCPeer
    var parameters: WebRTCParameters
    /// Addresses that passed a check, and when they last did (at most `maxAddresses`).
    var checked: [UDPAddress: Double] = [:]
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
