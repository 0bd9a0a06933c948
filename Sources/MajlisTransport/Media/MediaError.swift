/// What can go wrong on the media path.
public enum MediaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// SRTP could not be set up.
    case srtp(String)
    /// A packet failed authentication, was replayed, or was malformed (libsrtp2's status).
    case srtpRejected(Int)
    case socket(String)
    /// DTLS could not be set up.
    case dtls(String)

    public var description: String {
        switch self {
        case .srtp(let text): return "SRTP: \(text)"
        case .srtpRejected(let status): return "SRTP rejected a packet (status \(status))"
        case .socket(let text): return "UDP: \(text)"
        case .dtls(let text): return "DTLS: \(text)"
        }
    }
}
