import Foundation
import CSndFile

/// Audio files of any common kind through libsndfile: WAV, FLAC, Ogg (Opus, Vorbis), MP3, AIFF
/// and more, read whole (music and sound effects for the voice pipeline) or written (tests,
/// recordings).
public enum SoundFile {
    /// The kinds `write` makes.
    public enum Kind: String, Sendable, CaseIterable {
        case wav, flac, opus, vorbis, mp3

        var format: Int32 {
            switch self {
            case .wav: return Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
            case .flac: return Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16)
            case .opus: return Int32(SF_FORMAT_OGG | SF_FORMAT_OPUS)
            case .vorbis: return Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
            case .mp3: return Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III)
            }
        }
    }

    /// Files longer than this are refused (a decoded hour of stereo is 1.4 GB of floats).
    public static let longest = 30.0 * 60

    /// The first four bytes of the kinds libsndfile reads: WAV (RIFF, RIFX, RF64, Wave64), AIFF,
    /// FLAC, Ogg, AU, CAF, VOC and NIST.
    static let libsndfileHeaders: Set<Data> = Set(["RIFF", "RIFX", "RF64", "riff", "FORM", "fLaC", "OggS", ".snd", "dns.", "caff", "Crea", "NIST"].map { Data($0.utf8) })

    /// The whole file, as it is (its rate and channels).
    public static func read(_ path: String) throws(AudioError) -> PCMBuffer {
        var directory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &directory) else { throw AudioError.badFile("\(path): no such file") }
        guard !directory.boolValue else { throw AudioError.badFile("\(path): a directory, not a sound file") }
        guard FileManager.default.isReadableFile(atPath: path) else { throw AudioError.badFile("\(path): not readable (permissions)") }
        // libsndfile takes what starts with a header of its own; everything else is MP3 or
        // nothing, which libmpg123 tells quietly.
        let start = FileHandle(forReadingAtPath: path).flatMap { try? $0.read(upToCount: 4) } ?? Data()
        guard libsndfileHeaders.contains(start) else { return try MP3File.read(path, longest: longest) }
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            // libsndfile's own words for a file it cannot decode are often of another error
            // ("File does not exist or is not a regular file" for a damaged MP3).
            throw AudioError.badFile("\(path): not a sound file that can be decoded (WAV, FLAC, Ogg Opus or Vorbis, MP3), or damaged")
        }
        defer { sf_close(file) }
        guard info.channels > 0, info.samplerate > 0 else { throw AudioError.badFile("\(path): no audio in it") }
        guard Double(info.frames) / Double(info.samplerate) <= longest else {
            throw AudioError.badFile("\(path): longer than \(Int(longest / 60)) minutes")
        }
        var samples = [Float](repeating: 0, count: Int(info.frames) * Int(info.channels))
        // The frame count of some compressed files is an estimate: read what there is.
        let read = samples.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, info.frames) }
        samples.removeLast(samples.count - Int(read) * Int(info.channels))
        return PCMBuffer(sampleRate: Int(info.samplerate), channels: Int(info.channels), samples: samples)
    }

    /// Writes `buffer` as a file of `kind`.
    public static func write(_ buffer: PCMBuffer, to path: String, as kind: Kind) throws(AudioError) {
        var info = SF_INFO()
        info.samplerate = Int32(buffer.sampleRate)
        info.channels = Int32(buffer.channels)
        info.format = kind.format
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw AudioError.badFile("\(path): \(String(cString: sf_strerror(nil)))")
        }
        let written = buffer.samples.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t(buffer.frameCount)) }
        sf_close(file)
        guard written == buffer.frameCount else { throw AudioError.badFile("\(path): written \(written) of \(buffer.frameCount) frames") }
    }
}
