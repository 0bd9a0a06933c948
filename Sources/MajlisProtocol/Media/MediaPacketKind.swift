/// What a datagram on the media port is, from its first two bytes (RFC 7983 and RFC 5761):
/// STUN, DTLS, RTP or RTCP share one port and never collide.
public enum MediaPacketKind: Sendable, Equatable {
    case stun
    case dtls
    case rtp
    case rtcp
    case unknown

    public init(first: UInt8, second: UInt8) {
        switch first {
        case 0...3: self = .stun
        case 20...63: self = .dtls
        case 128...191: self = (192...223).contains(second) ? .rtcp : .rtp
        default: self = .unknown
        }
    }

    /// The kind of `bytes` (unknown when shorter than two bytes).
    public init(_ bytes: some Collection<UInt8>) {
        guard bytes.count >= 2 else {
            self = .unknown
            return
        }
        self.init(first: bytes[bytes.startIndex], second: bytes[bytes.index(after: bytes.startIndex)])
    }
}
