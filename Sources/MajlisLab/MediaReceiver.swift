import MajlisProtocol

/// Something that receives the room's audio as RTP: a native client or a WebRTC one.
public protocol MediaReceiver: Sendable {
    /// The next RTP packet, decrypted; nil when nothing came (at once when `wait` is false).
    func receive(wait: Bool) throws -> RTPPacket?
}

extension RawMediaClient: MediaReceiver {}
extension WebRTCClient: MediaReceiver {}
