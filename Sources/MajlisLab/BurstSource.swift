import Foundation
import MajlisAudio
import Synchronization

/// A microphone that is silent until armed, then plays a 100 ms 1 kHz burst; it remembers
/// when the burst's first frame was handed out.
public final class BurstSource: AudioSource, @unchecked Sendable {
    // Audited: `state` is behind its lock; `generator` is used on the media clock thread only.
    private let state = Mutex<(armed: Bool, remaining: Int, startedAt: UInt64?)>((false, 0, nil))
    private var generator = ToneGenerator(frequency: 1_000, amplitude: 0.5)

    public init() {}

    public func arm() { state.withLock { $0 = (true, 5, nil) } }

    /// When the burst started (monotonic nanoseconds).
    public var startedAt: UInt64? { state.withLock { $0.startedAt } }

    public func nextFrame() -> [Int16] {
        let playing = state.withLock { state -> Bool in
            guard state.armed, state.remaining > 0 else { return false }
            if state.startedAt == nil { state.startedAt = DispatchTime.now().uptimeNanoseconds }
            state.remaining -= 1
            return true
        }
        return playing ? generator.next() : [Int16](repeating: 0, count: AudioFormat.frameSamples)
    }
}
