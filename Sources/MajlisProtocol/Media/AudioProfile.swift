/// How the encoder is set for what is sent: speech (Opus tuned for voice, 32 kb/s, silences
/// sent as near-nothing) or music (Opus's general audio mode, 64 kb/s, the full band to 20 kHz,
/// nothing cut as silence), so that music sounds like music; stereo music as music, in two
/// channels at 96 kb/s.
public enum AudioProfile: String, Sendable, CaseIterable, Codable {
    case speech, music
    case stereoMusic = "stereo-music"

    /// The bitrate it starts at, bits per second (a weak network lowers it as for speech).
    public var bitrate: Int {
        switch self {
        case .speech: return 32_000
        case .music: return 64_000
        case .stereoMusic: return 96_000
        }
    }

    /// Whether the encoder is set for music.
    public var isMusic: Bool { self != .speech }

    /// The channels sent: 2 for stereo music, else 1.
    public var channels: Int { self == .stereoMusic ? 2 : 1 }
}
