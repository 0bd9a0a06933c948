/// How the encoder is set for what is sent: speech (Opus tuned for voice, 32 kb/s, silences
/// sent as near-nothing) or music (Opus's general audio mode, 64 kb/s, the full band to 20 kHz,
/// nothing cut as silence), so that music sounds like music.
public enum AudioProfile: String, Sendable, CaseIterable, Codable {
    case speech, music

    /// The bitrate it starts at, bits per second (a weak network lowers it as for speech).
    public var bitrate: Int {
        switch self {
        case .speech: return 32_000
        case .music: return 64_000
        }
    }
}
