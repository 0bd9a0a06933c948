import Synchronization

/// An app's tap (`AudioTap`) fed at the sample rate and channel count the app asks for: each
/// 20 ms frame of the engine (48 kHz) is converted before the app sees it, always as 20 ms at
/// its rate; unless the tap is read-only, what the app leaves in the frame is converted back and
/// goes on in the engine, a few milliseconds later (the converters' filters). Stereo to mono
/// averages both channels; mono to stereo copies it into both.
public final class FormattedTap: AudioTap {
    public let sampleRate: Int
    public let channels: Int
    public let readOnly: Bool
    private let tap: any AudioTap
    private let state = Mutex(State())

    /// The converters for the engine's channel count at the point (it changes when spatial sound
    /// is switched), and what each has made that was not handed on yet.
    private struct State {
        var engineChannels = 0
        var down: StreamResampler?
        var up: StreamResampler?
        var toApp: [Float] = []
        var toEngine: [Float] = []
    }

    /// `sampleRate`: 8000 to 96000, a multiple of 50 (so that 20 ms is a whole number of
    /// samples); `channels`: 1 or 2.
    public init(_ tap: any AudioTap, sampleRate: Int, channels: Int, readOnly: Bool = false) throws(AudioError) {
        guard (8_000...96_000).contains(sampleRate), sampleRate % 50 == 0 else {
            throw AudioError.resampling("a tap's rate must be 8000 to 96000 Hz and a multiple of 50, not \(sampleRate)")
        }
        guard channels == 1 || channels == 2 else { throw AudioError.resampling("a tap has 1 or 2 channels, not \(channels)") }
        self.tap = tap
        self.sampleRate = sampleRate
        self.channels = channels
        self.readOnly = readOnly
    }

    public func process(_ frame: inout [Int16], channels engineChannels: Int) {
        let rate = sampleRate
        let appChannels = channels
        let readOnly = readOnly
        state.withLock { state in
            if state.engineChannels != engineChannels {
                state = State()
                state.engineChannels = engineChannels
                if rate != AudioFormat.sampleRate {
                    state.down = try? StreamResampler(from: AudioFormat.sampleRate, to: rate, channels: appChannels)
                    if !readOnly { state.up = try? StreamResampler(from: rate, to: AudioFormat.sampleRate, channels: appChannels) }
                }
            }
            let wanted = rate / 50 * appChannels
            let mixed = Self.convert(frame.map { Float($0) / 32_768 }, from: engineChannels, to: appChannels)
            state.toApp += state.down?.process(mixed) ?? mixed
            var appFrame = Self.take(wanted, from: &state.toApp).map { Int16(clamping: Int(($0 * 32_768).rounded())) }
            tap.process(&appFrame, channels: appChannels)
            guard !readOnly, appFrame.count == wanted else { return }
            let back = appFrame.map { Float($0) / 32_768 }
            state.toEngine += state.up?.process(back) ?? back
            let engine = Self.take(frame.count / engineChannels * appChannels, from: &state.toEngine)
            frame = Self.convert(engine, from: appChannels, to: engineChannels).map { Int16(clamping: Int(($0 * 32_768).rounded())) }
        }
    }

    /// Interleaved samples of `from` channels as `to` channels.
    static func convert(_ samples: [Float], from: Int, to: Int) -> [Float] {
        guard from != to else { return samples }
        if to == 1 { return stride(from: 0, to: samples.count - 1, by: 2).map { (samples[$0] + samples[$0 + 1]) / 2 } }
        return samples.flatMap { [$0, $0] }
    }

    /// The first `count` samples of `fifo`, taken off it; when it has fewer (the converters'
    /// delay, at the start), silence goes before them.
    static func take(_ count: Int, from fifo: inout [Float]) -> [Float] {
        if fifo.count < count { fifo.insert(contentsOf: repeatElement(0, count: count - fifo.count), at: 0) }
        defer { fifo.removeFirst(count) }
        return Array(fifo.prefix(count))
    }
}
