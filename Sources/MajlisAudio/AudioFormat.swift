/// The one format audio travels in: 48 kHz mono, 20 ms frames of 16-bit samples.
public enum AudioFormat {
    public static let sampleRate = 48_000
    public static let channels = 1
    /// Samples in one 20 ms frame.
    public static let frameSamples = 960
    public static let frameMilliseconds = 20
}
