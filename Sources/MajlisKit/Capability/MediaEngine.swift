import MajlisProtocol

/// The media capability (the "RTC" role of seed 000). The voice plane implements it; the business
/// layer only tells it whether to publish and which room it is in.
public protocol MediaEngine: AnyObject, Sendable {
    /// Starts or stops sending the microphone. VoiceRoom calls it when the user may speak (seated,
    /// seat not host-muted, mic on) or may no longer.
    func setPublishing(_ publishing: Bool) async
    /// Leaves the room's media.
    func stop() async
    /// Where and how to send and receive (the snapshot's `media`), after every join and sync.
    func configure(_ media: JSONValue?) async
    /// Microphone volume, 0...400 (100 unchanged).
    func setCaptureVolume(_ volume: Int) async
    /// Volume of everything heard, 0...400 (100 unchanged).
    func setPlaybackVolume(_ volume: Int) async
    /// Stops (or resumes) playing one remote speaker, by the SSRC its seat carries.
    func setRemoteMuted(ssrc: UInt32, muted: Bool) async
    /// One remote speaker's playout volume, 0...400 (100 unchanged), by the SSRC its seat carries.
    func setRemoteVolume(ssrc: UInt32, volume: Int) async
    /// Spatial sound: each speaker (by SSRC) heard from its place around the listener, binaurally
    /// (nil: off, everyone in the middle). Needs a stereo sink; others play mono as before.
    func setSpatialSound(_ positions: [UInt32: SpatialPosition]?) async
    /// Echo cancellation, noise suppression and automatic gain on the microphone.
    func setVoiceProcessing(_ processing: VoiceProcessing) async
    /// How the voice is changed before it is sent (pitch, equalizer, reverb; `VoiceEffect.Preset`).
    func setVoiceEffect(_ effect: VoiceEffect) async
    /// How long the microphone's and the speaker's own buffers hold the sound, milliseconds,
    /// together (0 without devices): what the echo test leaves out of the delay it asks for.
    var deviceLatency: Double { get }
}

extension MediaEngine {
    public func configure(_ media: JSONValue?) async {}
    public func setCaptureVolume(_ volume: Int) async {}
    public func setPlaybackVolume(_ volume: Int) async {}
    public func setRemoteMuted(ssrc: UInt32, muted: Bool) async {}
    public func setRemoteVolume(ssrc: UInt32, volume: Int) async {}
    public func setSpatialSound(_ positions: [UInt32: SpatialPosition]?) async {}
    public func setVoiceProcessing(_ processing: VoiceProcessing) async {}
    public func setVoiceEffect(_ effect: VoiceEffect) async {}
    public var deviceLatency: Double { 0 }
}

/// A media engine that does nothing (signaling-only apps and bots).
public final class NullMediaEngine: MediaEngine {
    public init() {}
    public func setPublishing(_ publishing: Bool) async {}
    public func stop() async {}
}
