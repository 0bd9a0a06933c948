import Synchronization

/// Music or a sound effect for the voice pipeline: a file decoded once (any kind `SoundFile`
/// reads, made 48 kHz, mono or stereo as the file is: a file of more channels keeps its first
/// two), played into what the room hears or only locally, with a loop count,
/// pause, resume, seek and separate volumes for what is sent and what is played here. Short
/// effects are made once and played as often as wanted. Every method may be called from any
/// thread; the media engine takes its frames.
public final class MusicTrack: Sendable {
    /// Where it is heard.
    public enum Destination: String, Sendable, CaseIterable {
        /// Mixed into the microphone (while it may be heard) and played here.
        case room
        /// Played here only.
        case local
    }

    private struct State {
        var position = 0
        /// Plays left after this one (-1: for ever).
        var loopsLeft = 0
        var playing = false
        var paused = false
        var sendVolume = 100
        var localVolume = 100
        var destination = Destination.room
    }

    /// The sound, 48 kHz, interleaved when it has two channels.
    public let samples: [Int16]
    /// 1, or 2 for stereo.
    public let channels: Int
    private let state = Mutex(State())

    /// The file at `path`, decoded.
    public convenience init(path: String) throws(AudioError) {
        let file = try SoundFile.read(path)
        guard file.channels >= 2 else {
            try self.init(samples: Resampler.toTransportFormat(file).int16)
            return
        }
        let stereo = (0..<file.frameCount).flatMap { [file.samples[$0 * file.channels], file.samples[$0 * file.channels + 1]] }
        try self.init(
            samples: Resampler.resample(PCMBuffer(sampleRate: file.sampleRate, channels: 2, samples: stereo), to: AudioFormat.sampleRate).int16,
            channels: 2)
    }

    /// `samples` at 48 kHz, interleaved when `channels` is 2.
    public init(samples: [Int16], channels: Int = 1) {
        self.channels = channels == 2 ? 2 : 1
        self.samples = Array(samples.prefix(samples.count / self.channels * self.channels))
    }

    /// Its frames (samples of each channel).
    private var frames: Int { samples.count / channels }

    /// Its length, milliseconds.
    public var duration: Double { Double(frames) / Double(AudioFormat.sampleRate) * 1_000 }

    /// Plays it from the start `loops` times (0 or less: until stopped), heard where `destination` says.
    public func play(loops: Int = 1, destination: Destination = .room) {
        state.withLock {
            $0.position = 0
            $0.loopsLeft = loops > 0 ? loops - 1 : -1
            $0.playing = !samples.isEmpty
            $0.paused = false
            $0.destination = destination
        }
    }

    public func pause() { state.withLock { $0.paused = true } }
    public func resume() { state.withLock { $0.paused = false } }
    public func stop() { state.withLock { $0.playing = false } }

    /// Moves to `milliseconds` from the start (clamped to its length).
    public func seek(to milliseconds: Double) {
        let sample = Int(milliseconds / 1_000 * Double(AudioFormat.sampleRate))
        let frames = frames
        state.withLock { $0.position = min(max(0, sample), frames) }
    }

    /// Where it is, milliseconds from the start.
    public var position: Double { Double(state.withLock { $0.position }) / Double(AudioFormat.sampleRate) * 1_000 }

    /// Whether it is playing (paused counts: it goes on where it was).
    public var isPlaying: Bool { state.withLock { $0.playing } }
    public var isPaused: Bool { state.withLock { $0.paused } }

    /// The volume of what the room hears of it, and of what is played here, 0...400 (100: as it is).
    public func setVolumes(send: Int? = nil, local: Int? = nil) {
        state.withLock { state in
            if let send { state.sendVolume = min(Gain.range.upperBound, max(Gain.range.lowerBound, send)) }
            if let local { state.localVolume = min(Gain.range.upperBound, max(Gain.range.lowerBound, local)) }
        }
    }

    public var volumes: (send: Int, local: Int) { state.withLock { ($0.sendVolume, $0.localVolume) } }

    /// The next 20 ms (in its channels): what goes to the room (nil: nothing) and what is played
    /// here; nil when it is not playing or paused. Moves on by a frame, looping as asked.
    func next() -> (send: [Int16]?, local: [Int16])? {
        let (channels, frames) = (channels, frames)
        let taken = state.withLock { state -> (frame: [Int16], send: Int?, local: Int)? in
            guard state.playing, !state.paused else { return nil }
            let wanted = AudioFormat.frameSamples * channels
            var frame: [Int16] = []
            frame.reserveCapacity(wanted)
            while frame.count < wanted {
                if state.position >= frames {
                    guard state.loopsLeft != 0 else {
                        state.playing = false
                        break
                    }
                    if state.loopsLeft > 0 { state.loopsLeft -= 1 }
                    state.position = 0
                }
                let count = min((wanted - frame.count) / channels, frames - state.position)
                frame += samples[(state.position * channels)..<((state.position + count) * channels)]
                state.position += count
            }
            guard !frame.isEmpty else { return nil }
            frame += [Int16](repeating: 0, count: wanted - frame.count)
            return (frame, state.destination == .room ? state.sendVolume : nil, state.localVolume)
        }
        guard let taken else { return nil }
        return (taken.send.map { Gain.apply($0, to: taken.frame) }, Gain.apply(taken.local, to: taken.frame))
    }
}
