#if canImport(MajlisAudio)
import MajlisAudio

/// A setting for a client's media plane. The live engine queues what the app asks, from any
/// thread, in one inbox, and its thread hands the core the whole list, in order, before each
/// tick (`MediaClientCore.apply`); a virtual call applies them directly.
public enum MediaCommand: Sendable {
    /// Whether the microphone is sent.
    case publish(Bool)
    /// 0...400, 100 as captured.
    case captureVolume(Int)
    case playbackVolume(Int)
    case muteRemote(ssrc: UInt32, muted: Bool)
    /// One speaker's playout volume, 0...400.
    case remoteVolume(ssrc: UInt32, volume: Int)
    case processing(VoiceProcessing)
    case effect(VoiceEffect)
    /// A track already started (`MusicTrack.play`), mixed in until it ends.
    case play(MusicTrack)
    /// In-ear monitoring at this volume (0: off).
    case monitor(volume: Int)
    /// Spatial sound with these places (nil: off).
    case spatial([UInt32: SpatialPosition]?)
    /// An app's tap at a point (nil: removed).
    case tap((any AudioTap)?, at: AudioTapPoint)
}
#endif
