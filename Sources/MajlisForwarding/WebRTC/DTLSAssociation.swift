import CDTLS
import MajlisTransport

/// One peer's DTLS 1.2 association (RFC 6347), fed datagrams by its owner: the router plays the
/// server role toward browsers, test and benchmark clients the client role. It yields the SRTP
/// keys (RFC 5764) once the peer's certificate matches the fingerprint its SDP gave. Not
/// thread-safe: one thread owns it.
public final class DTLSAssociation {
    public enum State: Equatable, Sendable {
        case handshaking
        /// Done, and the peer's certificate matched: the SRTP master keys and salts (30 bytes
        /// each), for what the peer sends and for what is sent to it.
        case connected(inbound: [UInt8], outbound: [UInt8])
        case failed(String)
        case closed
    }

    /// The path MTU assumed for handshake records.
    public static let mtu = 1_200
    /// RFC 5764's id of SRTP_AES128_CM_SHA1_80.
    static let aes128CMSHA1_80: Int32 = 0x0001

    public enum Role: Sendable {
        /// Sends the first flight (`start()`); SDP `a=setup:active`.
        case client
        /// Answers; SDP `a=setup:passive`.
        case server
    }

    public let role: Role
    private let association: OpaquePointer
    private let expectedFingerprint: [UInt8]
    public private(set) var state = State.handshaking
    private var output = [UInt8](repeating: 0, count: 16_384)

    /// An association for a peer whose certificate's SHA-256 digest must be `peerFingerprint`.
    public init(identity: DTLSIdentity, peerFingerprint: [UInt8], role: Role = .server) throws(MediaError) {
        guard let association = majlis_dtls_new(identity.identity, Int32(Self.mtu), role == .client ? 1 : 0) else {
            throw MediaError.dtls("cannot make a DTLS association")
        }
        self.association = association
        self.role = role
        expectedFingerprint = peerFingerprint
    }

    deinit { majlis_dtls_free(association) }

    /// The client's first flight (ClientHello).
    public func start() -> [[UInt8]] { receive([]) }

    /// Takes one DTLS datagram; returns the datagrams to send back.
    public func receive(_ datagram: [UInt8]) -> [[UInt8]] {
        switch state {
        case .failed, .closed: return []
        case .handshaking, .connected: break
        }
        let result = datagram.withUnsafeBufferPointer { majlis_dtls_feed(association, $0.baseAddress, Int32($0.count)) }
        switch result {
        case Int32(MAJLIS_DTLS_CONNECTED):
            if case .handshaking = state {
                state = finish()
                if case .failed = state { majlis_dtls_close(association) }
            }
        case Int32(MAJLIS_DTLS_HANDSHAKING):
            break
        case Int32(MAJLIS_DTLS_CLOSED):
            state = .closed
        default:
            state = .failed("DTLS handshake failed: \(Self.lastError())")
        }
        return takeDatagrams()
    }

    /// Called now and then while handshaking: the last flight again if its timer ran out.
    public func retransmitIfDue() -> [[UInt8]] {
        guard case .handshaking = state, majlis_dtls_handle_timeout(association) == 1 else { return [] }
        return takeDatagrams()
    }

    private func finish() -> State {
        var digest = [UInt8](repeating: 0, count: 32)
        guard majlis_dtls_peer_fingerprint(association, &digest) == 1 else { return .failed("the peer sent no certificate") }
        guard HMACSHA256.equal(digest, expectedFingerprint) else {
            return .failed("the peer's certificate does not match its SDP fingerprint (\(DTLSIdentity.text(digest)))")
        }
        guard majlis_dtls_srtp_profile(association) == Self.aes128CMSHA1_80 else { return .failed("the peer did not agree to SRTP_AES128_CM_SHA1_80") }
        var material = [UInt8](repeating: 0, count: 60)
        guard majlis_dtls_export_srtp(association, &material, 60) == 1 else { return .failed("cannot export the SRTP keys") }
        // RFC 5764 section 4.2: client key, server key, client salt, server salt.
        let client = Array(material[0..<16] + material[32..<46]), server = Array(material[16..<32] + material[46..<60])
        return role == .server ? .connected(inbound: client, outbound: server) : .connected(inbound: server, outbound: client)
    }

    /// What OpenSSL wrote, split into datagrams: whole records, packed up to the MTU.
    private func takeDatagrams() -> [[UInt8]] {
        var bytes: [UInt8] = []
        while true {
            let count = Int(majlis_dtls_take_output(association, &output, Int32(output.count)))
            guard count > 0 else { break }
            bytes += output.prefix(count)
        }
        return Self.datagrams(fromRecords: bytes, mtu: Self.mtu)
    }

    /// Splits a run of DTLS records (13-byte header, length in bytes 11-12) into datagrams of
    /// whole records, each at most `mtu` bytes unless one record alone is larger.
    static func datagrams(fromRecords bytes: [UInt8], mtu: Int) -> [[UInt8]] {
        var datagrams: [[UInt8]] = []
        var current: [UInt8] = []
        var offset = 0
        while offset + 13 <= bytes.count {
            let length = 13 + (Int(bytes[offset + 11]) << 8 | Int(bytes[offset + 12]))
            let end = min(bytes.count, offset + length)
            if !current.isEmpty, current.count + (end - offset) > mtu {
                datagrams.append(current)
                current = []
            }
            current += bytes[offset..<end]
            offset = end
        }
        if !current.isEmpty { datagrams.append(current) }
        return datagrams
    }

    static func lastError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        majlis_dtls_last_error(&buffer, Int32(buffer.count))
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
