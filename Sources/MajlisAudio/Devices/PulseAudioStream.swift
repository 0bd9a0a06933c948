#if canImport(CPulse)
import CPulse
import Foundation
import Synchronization

/// One stream to or from the sound server, 48 kHz 16-bit (mono, or stereo for spatial sound), run by its own thread (the only
/// one that touches the connection). The media engine's 20 ms clock and the device's clock
/// differ a little, so a short queue sits between them (`FrameQueue`, which keeps itself short),
/// and an empty queue plays (or hands out) silence. It runs until `close()`.
final class PulseAudioStream: Sendable {
    enum Direction: Sendable {
        case playback, record
    }

    private let frames: Mutex<FrameQueue>
    /// What the sound server last said of the stream's latency, microseconds (read on the first
    /// frames, then every second).
    private let serverLatency = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)
    private let ended = DispatchSemaphore(value: 0)
    private let channels: Int
    /// Frames the sound server keeps queued for playback (writes wait while it holds them).
    static let playbackFrames = 3
    private let direction: Direction

    /// Connects (waiting for the server's answer) and starts the stream's thread.
    init(_ direction: Direction, server: String, device: String? = nil, depth: Int = 4, channels: Int = 1) throws(AudioError) {
        frames = Mutex(FrameQueue(depth: depth))
        self.channels = channels
        self.direction = direction
        let opened = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        Thread.detachNewThread { [self] in
            var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: UInt32(AudioFormat.sampleRate), channels: UInt8(channels))
            let frameBytes = UInt32(AudioFormat.frameSamples * 2 * channels)
            // Playback keeps about three frames queued in the server; recording hands out one frame at a time.
            var attributes = pa_buffer_attr(
                maxlength: UInt32.max, tlength: direction == .playback ? frameBytes * UInt32(Self.playbackFrames) : UInt32.max, prebuf: UInt32.max,
                minreq: UInt32.max, fragsize: direction == .record ? frameBytes : UInt32.max)
            var error: Int32 = 0
            let stream = pa_simple_new(
                server, "majlis", direction == .playback ? PA_STREAM_PLAYBACK : PA_STREAM_RECORD, device,
                direction == .playback ? "room" : "microphone", &spec, nil, &attributes, &error)
            guard let stream else {
                failure.withLock { $0 = String(cString: pa_strerror(error)) }
                opened.signal()
                ended.signal()
                return
            }
            opened.signal()
            switch direction {
            case .playback: play(stream)
            case .record: record(stream)
            }
            pa_simple_free(stream)
            ended.signal()
        }
        opened.wait()
        if let reason = failure.withLock({ $0 }) {
            throw AudioError.device("\(direction == .playback ? "speaker" : "microphone") on \(server): \(reason)")
        }
    }

    private func play(_ stream: OpaquePointer) {
        let silence = [Int16](repeating: 0, count: AudioFormat.frameSamples * channels)
        var error: Int32 = 0
        var written = 0
        while running.load(ordering: .relaxed) {
            let frame = pop() ?? silence
            guard frame.withUnsafeBytes({ pa_simple_write(stream, $0.baseAddress, $0.count, &error) }) >= 0 else { return }
            written += 1
            if written <= 5 || written % 50 == 0 { measureLatency(stream) }
        }
        pa_simple_drain(stream, &error)
    }

    private func record(_ stream: OpaquePointer) {
        var frame = [Int16](repeating: 0, count: AudioFormat.frameSamples * channels)
        var error: Int32 = 0
        var read = 0
        while running.load(ordering: .relaxed) {
            guard frame.withUnsafeMutableBytes({ pa_simple_read(stream, $0.baseAddress, $0.count, &error) }) >= 0 else { return }
            push(frame)
            read += 1
            if read <= 5 || read % 50 == 0 { measureLatency(stream) }
        }
    }

    private func measureLatency(_ stream: OpaquePointer) {
        var error: Int32 = 0
        let microseconds = pa_simple_get_latency(stream, &error)
        if error == 0 { serverLatency.store(Int(microseconds), ordering: .relaxed) }
    }

    /// Queues a frame (playback: to be played; record: as captured).
    func push(_ frame: [Int16]) { frames.withLock { $0.push(frame) } }

    /// The oldest queued frame, or nil.
    func pop() -> [Int16]? { frames.withLock { $0.pop() } }

    /// From sound to frame (record) or frame to sound (playback), milliseconds: the sound
    /// server's buffer and the frames queued here.
    /// Playback counts at least what the server keeps queued: in the first frames it is still
    /// filling.
    var latency: Double {
        let frame = Double(AudioFormat.frameSamples * 1_000 / AudioFormat.sampleRate)
        var server = Double(serverLatency.load(ordering: .relaxed)) / 1_000
        if direction == .playback { server = max(server, Double(Self.playbackFrames) * frame) }
        return server + Double(frames.withLock { $0.count }) * frame
    }

    /// Ends the stream and waits for its thread (at most one frame's time and a drain).
    func close() {
        guard running.exchange(false, ordering: .relaxed) else { return }
        _ = ended.wait(timeout: .now() + 2)
    }
}
#endif
