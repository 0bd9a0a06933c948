/// A microphone: hands out 20 ms frames (960 samples at 48 kHz mono) when asked. The caller
/// paces it in real time. A platform device (ALSA, PulseAudio, AVAudioEngine) plugs in here.
public protocol AudioSource: AnyObject {
    func nextFrame() -> [Int16]
    /// Whether the source goes on by itself, read or not (a microphone: what is not read while
    /// nobody can hear it is gone), or waits to be read (a recording: it is read only while the
    /// call can carry it, so its start is not spoken into a path that is still being set up).
    var isLive: Bool { get }
}

extension AudioSource {
    public var isLive: Bool { true }
}

/// A sine tone as the microphone.
public final class ToneSource: AudioSource {
    private var generator: ToneGenerator
    public init(frequency: Double, amplitude: Double = 0.3) { generator = ToneGenerator(frequency: frequency, amplitude: amplitude) }
    public func nextFrame() -> [Int16] { generator.next() }
}

/// Silence as the microphone.
public final class SilenceSource: AudioSource {
    public init() {}
    public func nextFrame() -> [Int16] { [Int16](repeating: 0, count: AudioFormat.frameSamples) }
}

/// A WAV file (any rate and channels; converted) as the microphone, then silence at its end.
public final class FileSource: AudioSource {
    private let samples: [Int16]
    private var position = 0

    public init(path: String) throws(AudioError) {
        samples = try Resampler.toTransportFormat(WAVFile.read(path)).int16
    }

    /// Whether the whole file has been handed out.
    public var finished: Bool { position >= samples.count }

    public var isLive: Bool { false }

    public func nextFrame() -> [Int16] {
        var frame = [Int16](repeating: 0, count: AudioFormat.frameSamples)
        let count = max(0, min(AudioFormat.frameSamples, samples.count - position))
        if count > 0 { frame.replaceSubrange(0..<count, with: samples[position..<position + count]) }
        position += AudioFormat.frameSamples
        return frame
    }
}
