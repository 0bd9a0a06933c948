import Synchronization

/// A microphone the app feeds: PCM pushed at the app's own pace (48 kHz mono), handed to the
/// engine 20 ms at a time; when too little has come, the missing part is silence. At most
/// `capacity` samples wait (a second by default); older ones make way.
public final class PushedSource: AudioSource, Sendable {
    private let queue = Mutex<[Int16]>([])
    public let capacity: Int

    public init(capacity: Int = AudioFormat.sampleRate) { self.capacity = capacity }

    /// Adds samples to what the engine reads next.
    public func push(_ samples: [Int16]) {
        queue.withLock { queue in
            queue += samples
            if queue.count > capacity { queue.removeFirst(queue.count - capacity) }
        }
    }

    /// How many samples wait.
    public var waiting: Int { queue.withLock { $0.count } }

    /// What waits, milliseconds (the app's own device buffers are its to add).
    public var latency: Double { Double(waiting) * 1_000 / Double(AudioFormat.sampleRate) }

    public func nextFrame() -> [Int16] {
        queue.withLock { queue in
            let count = min(AudioFormat.frameSamples, queue.count)
            let frame = Array(queue.prefix(count)) + [Int16](repeating: 0, count: AudioFormat.frameSamples - count)
            queue.removeFirst(count)
            return frame
        }
    }
}
