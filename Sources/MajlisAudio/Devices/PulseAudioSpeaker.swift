#if canImport(CPulse)
/// The sound server's output (its default sink, or `PULSE_SINK`) as a speaker, until `close()`.
public final class PulseAudioSpeaker: AudioSink {
    private let stream: PulseAudioStream

    public init(server: String) throws(AudioError) { stream = try PulseAudioStream(.playback, server: server) }

    public func play(_ frame: [Int16]) { stream.push(frame) }

    public func close() { stream.close() }
}
#endif
