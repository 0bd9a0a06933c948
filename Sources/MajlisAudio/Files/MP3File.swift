import CMPG123

/// MP3 (MPEG layer 1, 2 and 3) files, decoded whole by libmpg123 with its notes silenced: through
/// libsndfile, a damaged file printed libmpg123's resync notes on standard error, over whatever
/// the terminal client was showing.
enum MP3File {
    /// The whole file at its own rate and channels, or an error saying why it cannot be decoded.
    static func read(_ path: String, longest: Double) throws(AudioError) -> PCMBuffer {
        var status = Int32(0)
        guard let handle = mpg123_new(nil, &status) else { throw AudioError.badFile("\(path): the MP3 decoder could not start") }
        defer { mpg123_delete(handle) }
        mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_QUIET.rawValue | MPG123_GAPLESS.rawValue), 0)
        // Floats only, at any rate the decoder has, mono or stereo as the file is.
        mpg123_format_none(handle)
        var rates: UnsafePointer<Int>?
        var rateCount = 0
        mpg123_rates(&rates, &rateCount)
        for index in 0..<rateCount {
            mpg123_format(handle, rates![index], Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue), Int32(MPG123_ENC_FLOAT_32.rawValue))
        }
        let undecodable = AudioError.badFile("\(path): not a sound file that can be decoded (WAV, FLAC, Ogg Opus or Vorbis, MP3), or damaged")
        guard mpg123_open(handle, path) == MPG123_OK.rawValue else { throw undecodable }
        defer { mpg123_close(handle) }
        var rate = 0
        var channels = Int32(0)
        var encoding = Int32(0)
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue, rate > 0, channels > 0 else { throw undecodable }
        var samples: [Float] = []
        var chunk = [Float](repeating: 0, count: 16_384)
        let limit = Int(longest * Double(rate)) * Int(channels)
        while true {
            var done = 0
            status = chunk.withUnsafeMutableBytes { mpg123_read(handle, $0.baseAddress, $0.count, &done) }
            samples.append(contentsOf: chunk[0..<(done / MemoryLayout<Float>.size)])
            guard samples.count <= limit else { throw AudioError.badFile("\(path): longer than \(Int(longest / 60)) minutes") }
            if status == MPG123_DONE.rawValue { break }
            // A change of format mid-file (rare: joined streams) is not followed; what came
            // before it is the track.
            if status == MPG123_NEW_FORMAT.rawValue { break }
            // Damage after the first frames ends the track where the damage starts.
            guard status == MPG123_OK.rawValue else {
                if samples.isEmpty { throw undecodable }
                break
            }
        }
        guard !samples.isEmpty else { throw AudioError.badFile("\(path): no audio in it") }
        return PCMBuffer(sampleRate: rate, channels: Int(channels), samples: samples)
    }
}
