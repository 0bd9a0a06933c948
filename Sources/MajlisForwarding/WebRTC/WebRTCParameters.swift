import MajlisTransport
/// What one browser negotiated, as the router needs it per packet: its payload types and
/// header extension id (rewritten to and from the router's own: Opus 111, RED 63, audio level
/// 1), and the SSRC of the receive track for each seat.
public struct WebRTCParameters: Sendable, Equatable {
    public var opusPayloadType: UInt8
    /// nil: the peer does not decode RED, so it gets the primary frame only.
    public var redPayloadType: UInt8?
    public var audioLevelExtension: UInt8?
    /// Whether the peer may send audio (it offered a section it sends on).
    public var sends: Bool
    /// The SSRC the server sends seat `i`'s speaker with, at index `i`.
    public var trackSSRCs: [UInt32]

    public init(opusPayloadType: UInt8, redPayloadType: UInt8?, audioLevelExtension: UInt8?, sends: Bool, trackSSRCs: [UInt32]) {
        self.opusPayloadType = opusPayloadType
        self.redPayloadType = redPayloadType
        self.audioLevelExtension = audioLevelExtension
        self.sends = sends
        self.trackSSRCs = trackSSRCs
    }

    /// The fixed SSRC of seat `seat`'s track.
    public static func trackSSRC(seat: Int) -> UInt32 { 0x4D4A_0000 | UInt32(seat & 0xFFFF) }
}
