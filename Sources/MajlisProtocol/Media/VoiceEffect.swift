/// How a voice is changed before it is sent: pitch, a ten-band equalizer, a room's reverb and a
/// ring modulator (the robot). Named presets are built from them.
public struct VoiceEffect: Sendable, Equatable, Codable {
    /// Semitones up or down, -12...12.
    public var pitch: Double
    /// Ten band gains, dB (-15...15), at 31, 62, 125, 250, 500 Hz, 1, 2, 4, 8 and 16 kHz.
    public var equalizer: [Double]
    public var reverb: ReverbSettings?
    /// A ring modulator's frequency, Hz (the voice times a sine: metallic, a robot), or nil.
    public var ringModulation: Double?

    public init(pitch: Double = 0, equalizer: [Double] = Array(repeating: 0, count: 10), reverb: ReverbSettings? = nil, ringModulation: Double? = nil) {
        self.pitch = min(12, max(-12, pitch))
        self.equalizer = (0..<10).map { $0 < equalizer.count ? min(15, max(-15, equalizer[$0])) : 0 }
        self.reverb = reverb
        self.ringModulation = ringModulation
    }

    /// The voice as it is.
    public static let none = VoiceEffect()

    /// Whether the effect changes anything.
    public var isActive: Bool { pitch != 0 || equalizer.contains { $0 != 0 } || reverb != nil || ringModulation != nil }

    /// The named presets.
    public enum Preset: String, Sendable, CaseIterable, Codable {
        case none, deeper, brighter, child, elder, robot, ktv, studio, hall

        public var effect: VoiceEffect {
            switch self {
            case .none: return .none
            // A lower voice with more chest.
            case .deeper: return VoiceEffect(pitch: -4, equalizer: [0, 3, 4, 2, 0, 0, -1, -2, -2, 0])
            // Slightly higher, with presence and air.
            case .brighter: return VoiceEffect(pitch: 2, equalizer: [0, -2, -2, -1, 0, 1, 3, 4, 4, 3])
            case .child: return VoiceEffect(pitch: 7, equalizer: [-6, -6, -4, -2, 0, 1, 2, 3, 2, 0])
            case .elder: return VoiceEffect(pitch: -2, equalizer: [-4, -3, -1, 0, 1, 2, 0, -3, -5, -6], reverb: ReverbSettings(roomSize: 0.2, damping: 0.8, wet: 0.1))
            case .robot: return VoiceEffect(equalizer: [-6, -4, -2, 0, 2, 3, 3, 2, 0, -2], reverb: ReverbSettings(roomSize: 0.1, damping: 0, wet: 0.15), ringModulation: 60)
            // A karaoke room: a warm, wide reverb, the voice a little forward.
            case .ktv: return VoiceEffect(equalizer: [0, 1, 2, 1, 0, 1, 2, 2, 1, 0], reverb: ReverbSettings(roomSize: 0.7, damping: 0.4, wet: 0.35))
            // A treated room: a short, soft ambience, warmth and clarity.
            case .studio: return VoiceEffect(equalizer: [-2, 0, 2, 1, 0, 0, 1, 2, 2, 1], reverb: ReverbSettings(roomSize: 0.3, damping: 0.6, wet: 0.12))
            case .hall: return VoiceEffect(reverb: ReverbSettings(roomSize: 0.95, damping: 0.3, wet: 0.45))
            }
        }
    }
}
