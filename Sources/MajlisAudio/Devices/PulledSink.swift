import Synchronization

/// A speaker the app drives: the engine's frames wait here and the app pulls what its own
/// output needs, when it needs it (an audio callback); when too little waits, the rest is silence.
/// At most `capacity` samples wait (half a second by default); older ones make way.
public final class PulledSink: AudioSink, Sendable {
    private let queue = Mutex<[Int16]>([])
    public let capacity: Int
    public let channels: Int

    public init(channels: Int = 1, capacity: Int = AudioFormat.sampleRate / 2) {
        self.channels = channels == 2 ? 2 : 1
        self.capacity = capacity * self.channels
    }

    public func play(_ frame: [Int16]) {
        queue.withLock { queue in
            queue += frame
            if queue.count > capacity { queue.removeFirst(queue.count - capacity) }
        }
    }

    /// What waits, milliseconds (the app's own device buffers are its to add).
    public var latency: Double { Double(queue.withLock { $0.count } / channels) * 1_000 / Double(AudioFormat.sampleRate) }

    /// The next `count` samples (interleaved when stereo), silence where none wait.
    public func pull(_ count: Int) -> [Int16] {
        queue.withLock { queue in
            let taken = min(count, queue.count)
            let samples = Array(queue.prefix(taken)) + [Int16](repeating: 0, count: max(0, count - taken))
            queue.removeFirst(taken)
            return samples
        }
    }
}
