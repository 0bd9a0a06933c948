/// What the voice processor does to the microphone: echo cancellation, noise suppression and
/// automatic gain (WebRTC's audio processing, the library PulseAudio's echo-cancel module uses).
public struct VoiceProcessing: Sendable, Equatable, Codable {
    /// How hard noise is suppressed.
    public enum Level: String, Sendable, CaseIterable, Codable {
        case off, low, moderate, high, veryHigh
    }

    /// Removes what the speaker plays from what the microphone hears.
    public var echoCancellation: Bool
    public var noiseSuppression: Level
    /// Brings quiet and loud voices to the same level (digital, towards -3 dBFS, with a limiter).
    public var automaticGain: Bool

    public init(echoCancellation: Bool = true, noiseSuppression: Level = .high, automaticGain: Bool = true) {
        self.echoCancellation = echoCancellation
        self.noiseSuppression = noiseSuppression
        self.automaticGain = automaticGain
    }

    /// All three on (noise suppression high): where a microphone and a speaker share a room.
    public static let standard = VoiceProcessing()
    /// Nothing done: a recording, a bot, a studio microphone on headphones.
    public static let off = VoiceProcessing(echoCancellation: false, noiseSuppression: .off, automaticGain: false)

    /// Whether anything is on.
    public var isActive: Bool { echoCancellation || noiseSuppression != .off || automaticGain }
}
