/// How loud one speaker is (an entry of `speaker.levels`).
public struct SpeakerLevel: Sendable, Codable, Equatable {
    public var user: String
    /// 0 (silent) ... 100 (full scale).
    public var level: Int
    /// Voice activity, as the speaker's client flagged it.
    public var vad: Bool

    public init(user: String, level: Int, vad: Bool) {
        self.user = user
        self.level = level
        self.vad = vad
    }
}
