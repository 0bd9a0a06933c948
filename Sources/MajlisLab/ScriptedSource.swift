import MajlisAudio
import Synchronization

/// A microphone that is silent until `play` hands it samples (48 kHz mono), then plays them
/// once, frame by frame, then is silent again.
public final class ScriptedSource: AudioSource, @unchecked Sendable {
    // Audited: all state is behind `state`.
    private let state = Mutex<(samples: [Int16], position: Int)>(([], 0))

    public init() {}

    public func play(_ samples: [Int16]) { state.withLock { $0 = (samples, 0) } }

    public var isLive: Bool { false }

    /// Samples handed out of what `play` gave (silence after them not counted).
    public var played: Int { state.withLock { min($0.position, $0.samples.count) } }

    /// Whether everything handed over has been played.
    public var finished: Bool { state.withLock { $0.position >= $0.samples.count } }

    public func nextFrame() -> [Int16] {
        state.withLock { state in
            var frame = [Int16](repeating: 0, count: AudioFormat.frameSamples)
            let count = max(0, min(AudioFormat.frameSamples, state.samples.count - state.position))
            if count > 0 { frame.replaceSubrange(0..<count, with: state.samples[state.position..<state.position + count]) }
            state.position += AudioFormat.frameSamples
            return frame
        }
    }
}
