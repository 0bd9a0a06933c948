import CDTLS
import Foundation
import MajlisTransport

/// The server's DTLS certificate (ECDSA P-256, self-signed) and key: made once and kept in the
/// data directory, so the fingerprint browsers see stays the same across restarts. Its SHA-256
/// fingerprint goes into every SDP answer.
public final class DTLSIdentity: @unchecked Sendable {
    // Audited: `identity` is configured in init and only read afterwards (OpenSSL allows new
    // SSL objects from one SSL_CTX on several threads).
    let identity: OpaquePointer
    /// The certificate's SHA-256 digest.
    public let fingerprint: [UInt8]

    /// The file an identity is kept in, inside the data directory.
    public static let fileName = "dtls-identity.pem"

    /// Reads the identity from `pem`.
    public init(pem: String) throws(MediaError) {
        let bytes = Array(pem.utf8)
        guard let identity = bytes.withUnsafeBufferPointer({ buffer in
            buffer.withMemoryRebound(to: CChar.self) { majlis_dtls_identity_load($0.baseAddress, Int32($0.count)) }
        }) else { throw MediaError.dtls("not a DTLS identity (a PEM key and certificate): \(DTLSAssociation.lastError())") }
        var digest = [UInt8](repeating: 0, count: 32)
        guard majlis_dtls_identity_fingerprint(identity, &digest) == 1 else {
            majlis_dtls_identity_free(identity)
            throw MediaError.dtls("cannot take the certificate's fingerprint")
        }
        self.identity = identity
        fingerprint = digest
    }

    deinit { majlis_dtls_identity_free(identity) }

    /// A new key and certificate, as PEM.
    public static func generatePEM() throws(MediaError) -> String {
        var buffer = [CChar](repeating: 0, count: 8_192)
        let length = majlis_dtls_generate_pem(&buffer, Int32(buffer.count))
        guard length > 0 else { throw MediaError.dtls("cannot make a certificate: \(DTLSAssociation.lastError())") }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The identity kept in `directory` (made and written there the first time), or a new one
    /// for this run when there is no directory.
    public static func load(directory: String?) throws(MediaError) -> DTLSIdentity {
        guard let directory else { return try DTLSIdentity(pem: generatePEM()) }
        let path = (directory as NSString).appendingPathComponent(fileName)
        if let pem = try? String(contentsOfFile: path, encoding: .utf8) { return try DTLSIdentity(pem: pem) }
        let pem = try generatePEM()
        guard FileManager.default.createFile(atPath: path, contents: Data(pem.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw MediaError.dtls("cannot write \(path)")
        }
        return try DTLSIdentity(pem: pem)
    }

    /// The fingerprint as SDP writes it: `AB:CD:...` (RFC 8122).
    public var fingerprintText: String { Self.text(fingerprint) }

    /// A digest as SDP writes it.
    public static func text(_ digest: [UInt8]) -> String {
        digest.map { String(format: "%02X", $0) }.joined(separator: ":")
    }
}
