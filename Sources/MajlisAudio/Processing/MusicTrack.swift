import Synchronization

/// Music or a sound effect for the voice pipeline: a file decoded once (any kind `SoundFile`
/// reads, made 48 kHz mono), played into what the room hears or only locally, with a loop count,
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

    /// The sound, 48 kHz mono.
    public let samples: [Int16]
    private let state = Mutex(State())

    /// The file at `path`, decoded.
    public convenience init(path: String) throws(AudioError) {
        try self.init(samples: Resampler.toTransportFormat(SoundFile.read(path)).int16)
    }

    public init(samples: [Int16]) {
        self.samples = samples
    }

    /// Its length, milliseconds.
    public var duration: Double { Double(samples.count) / Double(AudioFormat.sampleRate) * 1_000 }

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
        state.withLock { $0.position = min(max(0, sample), samples.count) }
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

    /// The next 20 ms: what goes to the room (nil: nothing) and what is played here; nil when it
    /// is not playing or paused. Moves on by a frame, looping as asked.
    func next() -> (send: [Int16]?, local: [Int16])? {
        let taken = state.withLock { state -> (frame: [Int16], send: Int?, local: Int)? in
            guard state.playing, !state.paused else { return nil }
            var frame: [Int16] = []
            frame.reserveCapacity(AudioFormat.frameSamples)
            while frame.count < AudioFormat.frameSamples {
                if state.position >= samples.count {
                    guard state.loopsLeft != 0 else {
                        state.playing = false
                        break
                    }
                    if state.loopsLeft > 0 { state.loopsLeft -= 1 }
                    state.position = 0
                }
                let count = min(AudioFormat.frameSamples - frame.count, samples.count - state.position)
                frame += samples[state.position..<state.position + count]
                state.position += count
            }
            guard !frame.isEmpty else { return nil }
            frame += [Int16](repeating: 0, count: AudioFormat.frameSamples - frame.count)
            return (frame, state.destination == .room ? state.sendVolume : nil, state.localVolume)
        }
        guard let taken else { return nil }
        return (taken.send.map { Gain.apply($0, to: taken.frame) }, Gain.apply(taken.local, to: taken.frame))
    }
}
