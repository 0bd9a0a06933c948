import CSRTP
import Synchronization

/// One direction of SRTP/SRTCP (RFC 3711) through libsrtp2, with the default suite
/// AES_CM_128_HMAC_SHA1_80 and a 30-byte master key (16 key + 14 salt).
///
/// Not thread-safe: each sender and each receiver owns its session (one thread at a time).
public final class SRTPSession {
    /// Which way packets go through this session.
    public enum Direction: Sendable {
        /// Protects what this side sends (any SSRC).
        case outbound
        /// Unprotects what this side receives (any SSRC).
        case inbound
    }

    /// The length of a master key plus salt.
    public static let keyLength = 30

    private var session: srtp_t?
    private var buffer = [UInt8](repeating: 0, count: 1600)

    private static let initialized: Bool = srtp_init() == srtp_err_status_ok

    public init(key: [UInt8], direction: Direction) throws(MediaError) {
        guard Self.initialized else { throw MediaError.srtp("srtp_init failed") }
        guard key.count == Self.keyLength else { throw MediaError.srtp("an SRTP key is \(Self.keyLength) bytes, not \(key.count)") }
        var policy = srtp_policy_t()
        srtp_crypto_policy_set_rtp_default(&policy.rtp)
        srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        policy.ssrc.type = direction == .outbound ? ssrc_any_outbound : ssrc_any_inbound
        policy.window_size = 1024
        policy.allow_repeat_tx = 1  // NACK retransmissions resend the same packet
        var keyCopy = key
        let status = keyCopy.withUnsafeMutableBufferPointer { pointer -> srtp_err_status_t in
            policy.key = pointer.baseAddress
            return srtp_create(&session, &policy)
        }
        guard status == srtp_err_status_ok else { throw MediaError.srtp("srtp_create failed (\(status.rawValue))") }
    }

    deinit { if let session { srtp_dealloc(session) } }

    private func run(_ packet: [UInt8], extra: Int, _ body: (srtp_t?, UnsafeMutableRawPointer, UnsafeMutablePointer<Int32>) -> srtp_err_status_t) throws(MediaError) -> [UInt8] {
        guard packet.count + extra <= buffer.count else { throw MediaError.srtp("packet of \(packet.count) bytes is too large") }
        var length = Int32(packet.count)
        let status = buffer.withUnsafeMutableBytes { raw -> srtp_err_status_t in
            packet.withUnsafeBytes { raw.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: packet.count) }
            return body(session, raw.baseAddress!, &length)
        }
        guard status == srtp_err_status_ok else { throw MediaError.srtpRejected(Int(status.rawValue)) }
        return Array(buffer.prefix(Int(length)))
    }

    /// An RTP packet made SRTP (encrypted payload, authentication tag appended).
    public func protect(rtp packet: [UInt8]) throws(MediaError) -> [UInt8] {
        try run(packet, extra: Int(SRTP_MAX_TRAILER_LEN)) { srtp_protect($0, $1, $2) }
    }

    /// The RTP packet inside an SRTP packet; throws if it fails authentication or is a replay.
    public func unprotect(srtp packet: [UInt8]) throws(MediaError) -> [UInt8] {
        guard packet.count >= 12 else { throw MediaError.srtpRejected(-1) }
        return try run(packet, extra: 0) { srtp_unprotect($0, $1, $2) }
    }

    public func protect(rtcp packet: [UInt8]) throws(MediaError) -> [UInt8] {
        try run(packet, extra: Int(SRTP_MAX_TRAILER_LEN) + 4) { srtp_protect_rtcp($0, $1, $2) }
    }

    public func unprotect(srtcp packet: [UInt8]) throws(MediaError) -> [UInt8] {
        guard packet.count >= 8 else { throw MediaError.srtpRejected(-1) }
        return try run(packet, extra: 0) { srtp_unprotect_rtcp($0, $1, $2) }
    }
}
