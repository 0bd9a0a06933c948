import Foundation
import MajlisProtocol

/// The `media` object of a room snapshot (docs/protocol.md section 12), read.
public struct MediaSettings: Sendable, Equatable {
    /// Where to send media.
    public var server: UDPAddress
    /// The SSRC to send with.
    public var ssrc: UInt32
    /// The 30-byte SRTP master key and salt.
    public var key: [UInt8]
    public var payloadType: UInt8
    public var audioLevelExtension: UInt8
    /// The RED (RFC 2198) payload type, when the server relays redundancy.
    public var redPayloadType: UInt8?

    /// The SSRC the server's own RTCP (reports, NACKs) carries.
    public static let serverSSRC: UInt32 = 1

    public init(server: UDPAddress, ssrc: UInt32, key: [UInt8], payloadType: UInt8 = 111, audioLevelExtension: UInt8 = 1, redPayloadType: UInt8? = 63) {
        self.server = server
        self.ssrc = ssrc
        self.key = key
        self.payloadType = payloadType
        self.audioLevelExtension = audioLevelExtension
        self.redPayloadType = redPayloadType
    }

    /// Reads a snapshot's `media`; nil when it is missing or malformed.
    public init?(_ media: JSONValue?) {
        guard let media, let ssrc = media["ssrc"]?.intValue, let keyText = media["key"]?.stringValue,
            let key = Data(base64Encoded: keyText), key.count == SRTPSession.keyLength, let udp = media["udp"]?.stringValue,
            let colon = udp.lastIndex(of: ":"),
            let server = UDPAddress(host: String(udp[..<colon]), port: Int(udp[udp.index(after: colon)...]) ?? -1)
        else { return nil }
        self.server = server
        self.ssrc = UInt32(truncatingIfNeeded: ssrc)
        self.key = Array(key)
        payloadType = UInt8(truncatingIfNeeded: media["payloadType"]?.intValue ?? 111)
        audioLevelExtension = UInt8(truncatingIfNeeded: media["audioLevelExtension"]?.intValue ?? 1)
        redPayloadType = media["redPayloadType"]?.intValue.map { UInt8(truncatingIfNeeded: $0) }
    }
}
