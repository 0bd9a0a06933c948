/// Interleaved floating-point samples (-1...1) with their rate and channel count.
public struct PCMBuffer: Sendable, Equatable {
    public var sampleRate: Int
    public var channels: Int
    public var samples: [Float]

    public init(sampleRate: Int, channels: Int, samples: [Float]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
    }

    /// Frames (samples per channel).
    public var frameCount: Int { channels > 0 ? samples.count / channels : 0 }

    /// Seconds of audio.
    public var duration: Double { sampleRate > 0 ? Double(frameCount) / Double(sampleRate) : 0 }

    /// One channel: the average of all channels.
    public func mono() -> PCMBuffer {
        guard channels > 1 else { return self }
        var out = [Float](repeating: 0, count: frameCount)
        for frame in 0..<frameCount {
            var sum: Float = 0
            for channel in 0..<channels { sum += samples[frame * channels + channel] }
            out[frame] = sum / Float(channels)
        }
        return PCMBuffer(sampleRate: sampleRate, channels: 1, samples: out)
    }

    /// 16-bit samples, clipped to range.
    public var int16: [Int16] {
        samples.map { Int16(max(-32768, min(32767, ($0 * 32768).rounded()))) }
    }

    /// A buffer of 16-bit samples.
    public init(sampleRate: Int, channels: Int, int16 samples: [Int16]) {
        self.init(sampleRate: sampleRate, channels: channels, samples: samples.map { Float($0) / 32768 })
    }
}
