/// A microphone: hands out 20 ms frames (960 samples at 48 kHz mono) when asked. The caller
/// paces it in real time. A platform device (ALSA, PulseAudio, AVAudioEngine) plugs in here.
public protocol AudioSource: AnyObject {
    /// 20 ms: 960 samples a channel, interleaved where there are two.
    func nextFrame() -> [Int16]
    /// 1 (mono) or 2 (stereo, interleaved).
    var channels: Int { get }
    /// Whether the source goes on by itself, read or not (a microphone: what is not read while
    /// nobody can hear it is gone), or waits to be read (a recording: it is read only while the
    /// call can carry it, so its start is not spoken into a path that is still being set up).
    var isLive: Bool { get }
    /// How long a sound takes to become a frame here, milliseconds (a device's buffers; 0 for a
    /// file). Read from any thread.
    var latency: Double { get }
}

extension AudioSource {
    public var isLive: Bool { true }
    public var latency: Double { 0 }
    public var channels: Int { 1 }
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

/// A WAV file (any rate and channels; converted) as the microphone, then silence at its end:
/// mono, or stereo where the file is and `stereo` asks for it (a stereo profile sends it as it is).
public final class FileSource: AudioSource {
    private let samples: [Int16]
    private var position = 0
    public let channels: Int

    public init(path: String, stereo: Bool = false) throws(AudioError) {
        let file = try WAVFile.read(path)
        if stereo && file.channels >= 2 {
            let pairs = (0..<file.frameCount).flatMap { [file.samples[$0 * file.channels], file.samples[$0 * file.channels + 1]] }
            samples = try Resampler.resample(PCMBuffer(sampleRate: file.sampleRate, channels: 2, samples: pairs), to: AudioFormat.sampleRate).int16
            channels = 2
        } else {
            samples = try Resampler.toTransportFormat(file).int16
            channels = 1
        }
    }

    /// Whether the whole file has been handed out.
    public var finished: Bool { position >= samples.count }

    public var isLive: Bool { false }

    public func nextFrame() -> [Int16] {
        let size = AudioFormat.frameSamples * channels
        var frame = [Int16](repeating: 0, count: size)
        let count = max(0, min(size, samples.count - position))
        if count > 0 { frame.replaceSubrange(0..<count, with: samples[position..<position + count]) }
        position += size
        return frame
    }
}
