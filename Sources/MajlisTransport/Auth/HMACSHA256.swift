import CCrypto

/// HMAC-SHA256 through OpenSSL's libcrypto.
public enum HMACSHA256 {
    /// The 32-byte MAC of `message` under `key`.
    public static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = key.withUnsafeBufferPointer { keyBuffer in
            message.withUnsafeBufferPointer { messageBuffer in
                output.withUnsafeMutableBufferPointer { out in
                    HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count), messageBuffer.baseAddress,
                         messageBuffer.count, out.baseAddress, &length)
                }
            }
        }
        guard ok != nil else { return [] }
        return Array(output.prefix(Int(length)))
    }

    /// Compares two MACs in time independent of where they differ.
    public static func equal(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count, !lhs.isEmpty else { return false }
        return lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 } }
    }

    /// `count` bytes from OpenSSL's random generator.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        if ok != 1 {
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        }
        return bytes
    }

    /// A new signing secret: 24 random bytes, in hex.
    public static func randomSecret() -> String {
        randomBytes(24).map { String(format: "%02x", $0) }.joined()
    }
}
