/// An app's hook on the sound inside the media engine: it is handed every 20 ms frame at its
/// point (48 kHz; mono, or interleaved stereo at the playout with spatial sound) and may read it
/// or change it in place. Called on the engine's thread: return quickly.
public protocol AudioTap: AnyObject, Sendable {
    func process(_ frame: inout [Int16], channels: Int)
}

/// Where a tap sits.
public enum AudioTapPoint: Hashable, Sendable {
    /// The microphone after voice processing and the voice effect, before music.
    case recording
    /// What is encoded and sent: the recording with the music sent to the room.
    case sent
    /// One remote speaker's voice, by SSRC, before it is mixed (read only: changes are not heard).
    case speaker(UInt32)
    /// Everything heard, mixed, before local music and monitoring.
    case mix
    /// What goes to the speaker, last.
    case playout
}
