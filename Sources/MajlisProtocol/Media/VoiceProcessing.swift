/// What the voice processor does to the microphone: echo cancellation, noise suppression and
/// automatic gain (MajlisAudio's `VoiceProcessor`).
public struct VoiceProcessing: Sendable, Equatable, Codable {
    /// How hard noise is suppressed: the deepest cut, 12, 18, 25 or 32 dB.
    public enum Level: String, Sendable, CaseIterable, Codable {
        case off, low, moderate, high, veryHigh
    }

    /// Removes what the speaker plays from what the microphone hears.
    public var echoCancellation: Bool
    public var noiseSuppression: Level
    /// Brings quiet and loud voices to the same level (one slow gain, towards -20 dBFS).
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
