import Synchronization

/// A speaker: takes the mixed 20 ms frames of everything heard (mono; interleaved stereo when
/// it has two channels and spatial sound is on).
public protocol AudioSink: AnyObject, Sendable {
    func play(_ frame: [Int16])
    /// 1 (mono) or 2 (stereo: frames of 960 left-right pairs).
    var channels: Int { get }
    /// How long a frame played here takes to be heard, milliseconds (a device's buffers; 0 for a
    /// recording). Read from any thread.
    var latency: Double { get }
}

extension AudioSink {
    public var channels: Int { 1 }
    public var latency: Double { 0 }
}

/// Keeps everything heard, to write as a 48 kHz WAV (mono, or stereo with `channels` 2).
public final class RecordingSink: AudioSink {
    private let samples = Mutex<[Int16]>([])
    public let channels: Int

    public init(channels: Int = 1) { self.channels = channels == 2 ? 2 : 1 }

    public func play(_ frame: [Int16]) { samples.withLock { $0 += frame } }

    public var recorded: [Int16] { samples.withLock { $0 } }

    public func write(to path: String) throws(AudioError) {
        try WAVFile.write(PCMBuffer(sampleRate: AudioFormat.sampleRate, channels: channels, int16: recorded), to: path)
    }
}

/// Drops what it is given.
public final class NullSink: AudioSink {
    public init() {}
    public func play(_ frame: [Int16]) {}
}
