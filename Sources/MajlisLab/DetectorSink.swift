import Foundation
import MajlisAudio
import Synchronization

/// A speaker that notes when loud audio (above -30 dBov) first comes out after a reset, and
/// the longest run of quiet frames it played.
public final class DetectorSink: AudioSink {
    private let state = Mutex<(heardAt: UInt64?, quietRun: Int, longestQuietRun: Int, played: Int, lastLoud: Int?)>((nil, 0, 0, 0, nil))

    public init() {}

    public func reset() { state.withLock { $0 = (nil, 0, 0, 0, nil) } }

    /// The number (from 0, counted since the reset) of the last loud frame played.
    public var lastLoudFrame: Int? { state.withLock { $0.lastLoud } }

    /// When loud audio came out first since the reset (monotonic nanoseconds).
    public var heardAt: UInt64? { state.withLock { $0.heardAt } }

    /// The longest run of quiet 20 ms frames since the reset.
    public var longestQuietRun: Int { state.withLock { max($0.longestQuietRun, $0.quietRun) } }

    public func play(_ frame: [Int16]) {
        let loud = LevelMeter.dBov(frame) > -30
        let now = DispatchTime.now().uptimeNanoseconds
        state.withLock { state in
            if loud {
                if state.heardAt == nil { state.heardAt = now }
                state.lastLoud = state.played
                state.longestQuietRun = max(state.longestQuietRun, state.quietRun)
                state.quietRun = 0
            } else {
                state.quietRun += 1
            }
            state.played += 1
        }
    }
}
