import CSampleRate

/// Sample-rate conversion of a stream, a piece at a time: the filter's state carries over from
/// one call to the next, so the sound runs on unbroken (libsamplerate, band-limited sinc). Not
/// for sharing between threads.
final class StreamResampler {
    private let state: OpaquePointer
    let ratio: Double
    let channels: Int

    init(from: Int, to: Int, channels: Int) throws(AudioError) {
        var error: Int32 = 0
        guard let state = src_new(Int32(SRC_SINC_FASTEST), Int32(channels), &error) else {
            throw AudioError.resampling(String(cString: src_strerror(error)))
        }
        self.state = state
        ratio = Double(to) / Double(from)
        self.channels = channels
    }

    deinit { src_delete(state) }

    /// Converts the interleaved `samples`; returns what is ready (about `ratio` times as many:
    /// the first call gives the filter's delay fewer).
    func process(_ samples: [Float]) -> [Float] {
        let frames = samples.count / channels
        var output = [Float](repeating: 0, count: (Int((Double(frames) * ratio).rounded(.up)) + 64) * channels)
        var data = SRC_DATA()
        let generated = samples.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out -> Int in
                data.data_in = input.baseAddress
                data.data_out = out.baseAddress
                data.input_frames = frames
                data.output_frames = out.count / channels
                data.src_ratio = ratio
                data.end_of_input = 0
                return src_process(state, &data) == 0 ? Int(data.output_frames_gen) : 0
            }
        }
        return Array(output.prefix(generated * channels))
    }
}
