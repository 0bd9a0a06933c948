/// What can go wrong in the audio module.
public enum AudioError: Error, Sendable, Equatable, CustomStringConvertible {
    case codec(String)
    case badFile(String)
    case resampling(String)
    /// The sound server (or a device on it) could not be used.
    case device(String)
    /// Voice processing or an effect could not be set up.
    case processing(String)

    public var description: String {
        switch self {
        case .codec(let text): return "codec: \(text)"
        case .badFile(let text): return "audio file: \(text)"
        case .resampling(let text): return "resampling: \(text)"
        case .device(let text): return "sound device: \(text)"
        case .processing(let text): return "audio processing: \(text)"
        }
    }
}
