import CSampleRate

/// Sample-rate conversion through libsamplerate (band-limited sinc).
public enum Resampler {
    /// `buffer` at `rate`, same channels.
    public static func resample(_ buffer: PCMBuffer, to rate: Int) throws(AudioError) -> PCMBuffer {
        guard buffer.sampleRate != rate, buffer.frameCount > 0 else {
            return PCMBuffer(sampleRate: rate, channels: buffer.channels, samples: buffer.samples)
        }
        let ratio = Double(rate) / Double(buffer.sampleRate)
        let outFrames = Int((Double(buffer.frameCount) * ratio).rounded(.up)) + 16
        var output = [Float](repeating: 0, count: outFrames * buffer.channels)
        var input = buffer.samples
        var data = SRC_DATA()
        let result: Int32 = input.withUnsafeMutableBufferPointer { inPointer in
            output.withUnsafeMutableBufferPointer { outPointer in
                data.data_in = UnsafePointer(inPointer.baseAddress)
                data.data_out = outPointer.baseAddress
                data.input_frames = Int(buffer.frameCount)
                data.output_frames = Int(outFrames)
                data.src_ratio = ratio
                return src_simple(&data, Int32(SRC_SINC_MEDIUM_QUALITY), Int32(buffer.channels))
            }
        }
        guard result == 0 else { throw AudioError.resampling(String(cString: src_strerror(result))) }
        return PCMBuffer(sampleRate: rate, channels: buffer.channels, samples: Array(output.prefix(Int(data.output_frames_gen) * buffer.channels)))
    }

    /// Any buffer as 48 kHz mono, the format audio travels in.
    public static func toTransportFormat(_ buffer: PCMBuffer) throws(AudioError) -> PCMBuffer {
        try resample(buffer.mono(), to: AudioFormat.sampleRate)
    }
}
