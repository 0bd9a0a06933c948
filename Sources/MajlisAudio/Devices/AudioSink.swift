import Synchronization

/// A speaker: takes the mixed 20 ms frames of everything heard.
public protocol AudioSink: AnyObject, Sendable {
    func play(_ frame: [Int16])
}

/// Keeps everything heard, to write as a 48 kHz mono WAV.
public final class RecordingSink: AudioSink {
    private let samples = Mutex<[Int16]>([])

    public init() {}

    public func play(_ frame: [Int16]) { samples.withLock { $0 += frame } }

    public var recorded: [Int16] { samples.withLock { $0 } }

    public func write(to path: String) throws(AudioError) {
        try WAVFile.write(PCMBuffer(sampleRate: AudioFormat.sampleRate, channels: 1, int16: recorded), to: path)
    }
}

/// Drops what it is given.
public final class NullSink: AudioSink {
    public init() {}
    public func play(_ frame: [Int16]) {}
}
