#if canImport(CPulse)
/// The sound server's input (its default source, or `PULSE_SOURCE`) as a microphone, until `close()`.
public final class PulseAudioMicrophone: AudioSource, Sendable {
    private let stream: PulseAudioStream

    public init(server: String) throws(AudioError) { stream = try PulseAudioStream(.record, server: server) }

    /// The oldest captured frame; silence while the device has not delivered one.
    public func nextFrame() -> [Int16] { stream.pop() ?? [Int16](repeating: 0, count: AudioFormat.frameSamples) }

    public var latency: Double { stream.latency }

    public func close() { stream.close() }
}
#endif
