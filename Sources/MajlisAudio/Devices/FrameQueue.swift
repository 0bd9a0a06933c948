/// The short queue of 20 ms frames between the media engine's clock and a sound device's: one
/// side pushes, the other pops. Its depth only ever grows by itself (a burst at start, a silence
/// played on an underrun), and every frame standing in it is latency, so it trims itself: when a
/// whole `window` of pops found a spare frame behind the one taken each time, the oldest frame is
/// dropped. Frames beyond `depth` drop the oldest too.
///
/// Measured through a PulseAudio null sink (`majlis echo-test`): without trimming, the speaker's
/// queue settled at 3 frames and the microphone's at 1-2, 80-100 ms of the 226 ms by which the
/// echo came back later than asked.
public struct FrameQueue: Sendable {
    /// Frames kept at most.
    public let depth: Int
    /// Pops over which a spare frame must have stood every time before one is dropped: a second
    /// (a device's and the engine's clocks wander by a frame within that, not by two).
    public let window: Int
    private var frames: [[Int16]] = []
    private var pops = 0
    private var fewestSpare = Int.max

    public init(depth: Int = 4, window: Int = 50) {
        self.depth = depth
        self.window = window
    }

    /// Frames waiting.
    public var count: Int { frames.count }

    public mutating func push(_ frame: [Int16]) {
        frames.append(frame)
        if frames.count > depth { frames.removeFirst(frames.count - depth) }
    }

    /// The oldest frame, or nil when none waits.
    public mutating func pop() -> [Int16]? {
        fewestSpare = min(fewestSpare, max(0, frames.count - 1))
        pops += 1
        if pops >= window {
            if fewestSpare > 0 { frames.removeFirst() }
            pops = 0
            fewestSpare = .max
        }
        return frames.isEmpty ? nil : frames.removeFirst()
    }
}
