import MajlisTransport
/// A browser's transport as negotiated over signaling, for the router: its ICE credentials
/// and the server's, the fingerprint its certificate must have, and what it negotiated.
public struct WebRTCPeer: Sendable, Equatable {
    /// The server's credentials for this peer (checks are signed with its password).
    public var local: ICECredentials
    public var peerUfrag: String
    /// The browser's ICE password: the server's own checks to it (proving an address) are
    /// signed with it.
    public var peerPassword: String
    public var peerFingerprint: [UInt8]
    public var parameters: WebRTCParameters

    public init(local: ICECredentials, peerUfrag: String, peerPassword: String, peerFingerprint: [UInt8], parameters: WebRTCParameters) {
        self.local = local
        self.peerUfrag = peerUfrag
        self.peerPassword = peerPassword
        self.peerFingerprint = peerFingerprint
        self.parameters = parameters
    }
}
