import Foundation

#if canImport(CryptoKit)
import CryptoKit
#else
import CCrypto
#endif

/// A resource pack as the server takes it and clients cache it (docs/protocol.md section 19): a
/// zip archive of animations (and sounds) with `manifest.json`, named by the SHA-256 of its
/// bytes, so that a pack whose content changed has a new name, and a copy that does not hash to
/// its name is not the pack.
public struct ResourcePack: Sendable, Equatable {
    /// The largest pack taken, in bytes.
    public static let maxBytes = 50 << 20

    /// The SHA-256 of the archive, 64 lowercase hex digits: its name.
    public var sha256: String
    public var manifest: PackManifest
    /// The archive's size in bytes.
    public var size: Int

    /// Checks `bytes` as a pack: a zip archive every entry of which inflates to its size and
    /// CRC-32, with a manifest that keeps every rule of the format and names only files it has.
    public init(archive bytes: [UInt8]) throws(PackError) {
        guard !bytes.isEmpty else { throw PackError("the pack is empty") }
        guard bytes.count <= Self.maxBytes else { throw PackError("the pack is \(bytes.count) bytes; at most \(Self.maxBytes) are taken") }
        let archive = try ZipArchive(bytes)
        for entry in archive.entries { _ = try archive.data(of: entry) }
        manifest = try PackManifest.read(from: archive)
        sha256 = Self.sha256(bytes)
        size = bytes.count
    }

    /// The SHA-256 of `bytes`, in lowercase hex.
    public static func sha256(_ bytes: [UInt8]) -> String {
        #if canImport(CryptoKit)
        let digest = Array(SHA256.hash(data: bytes))
        #else
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { EVP_Digest(input.baseAddress, input.count, $0.baseAddress, &length, EVP_sha256(), nil) }
        }
        digest = Array(digest.prefix(Int(length)))
        #endif
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    /// Whether `name` could be a pack's name (64 lowercase hex digits).
    public static func isName(_ name: String) -> Bool {
        name.count == 64 && name.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }
}
