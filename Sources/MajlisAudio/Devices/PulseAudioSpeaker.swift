#if canImport(CPulse)
/// The sound server's output (its default sink, or `PULSE_SINK`) as a speaker, until `close()`:
/// mono, or stereo (`channels` 2) for spatial sound.
public final class PulseAudioSpeaker: AudioSink {
    private let stream: PulseAudioStream
    public let channels: Int

    public init(server: String, channels: Int = 1) throws(AudioError) {
        self.channels = channels == 2 ? 2 : 1
        stream = try PulseAudioStream(.playback, server: server, channels: self.channels)
    }

    public func play(_ frame: [Int16]) { stream.push(frame) }

    public var latency: Double { stream.latency }

    public func close() { stream.close() }
}
#endif
