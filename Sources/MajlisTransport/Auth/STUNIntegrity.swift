import CCrypto
import MajlisProtocol

/// STUN MESSAGE-INTEGRITY (RFC 5389 section 15.4): HMAC-SHA1 keyed with the session's media key,
/// through OpenSSL.
public enum STUNIntegrity {
    static func hmacSHA1(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = key.withUnsafeBufferPointer { keyBuffer in
            message.withUnsafeBufferPointer { messageBuffer in
                output.withUnsafeMutableBufferPointer { out in
                    HMAC(EVP_sha1(), keyBuffer.baseAddress, Int32(keyBuffer.count), messageBuffer.baseAddress, messageBuffer.count,
                         out.baseAddress, &length)
                }
            }
        }
        return ok == nil ? [] : Array(output.prefix(Int(length)))
    }

    /// `message` with a MESSAGE-INTEGRITY attribute appended, signed with `key`.
    public static func sign(_ message: STUNMessage, key: [UInt8]) -> [UInt8] {
        var unsigned = message
        unsigned.attributes.removeAll { $0.type == STUNMessage.AttributeType.messageIntegrity.rawValue }
        let input = STUNMessage.integrityInput(unsigned.serialized()) ?? []
        var signed = unsigned
        signed.attributes.append(.init(type: STUNMessage.AttributeType.messageIntegrity.rawValue, value: hmacSHA1(key: key, message: input)))
        return signed.serialized()
    }

    /// Whether the raw datagram carries a MESSAGE-INTEGRITY that `key` made.
    public static func verify(_ raw: [UInt8], key: [UInt8]) -> Bool {
        guard let message = try? STUNMessage(parsing: raw), let mac = message.attribute(.messageIntegrity), mac.count == 20,
            let input = STUNMessage.integrityInput(raw)
        else { return false }
        return HMACSHA256.equal(hmacSHA1(key: key, message: input), mac)
    }
}
