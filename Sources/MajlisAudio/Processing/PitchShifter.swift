import CSoundTouch

/// Moves a voice's pitch by semitones without changing its speed (SoundTouch: time-stretched by
/// overlap-add, then resampled back). It holds back 60 to 100 ms of audio to do so; what comes
/// out is the same length as what goes in, and never runs short.
public final class PitchShifter {
    // Audited: the handle is used by the owner's thread only (the class is not Sendable).
    private let handle: UnsafeMutableRawPointer
    private var output: [Float] = []
    /// Whether enough is held to hand out whole frames from now on.
    private var flowing = false
    /// The shift, semitones (-12...12).
    public private(set) var semitones: Double = 0
    public static let range = -12.0...12.0

    public init(semitones: Double = 0, sampleRate: Int = AudioFormat.sampleRate) throws(AudioError) {
        guard let handle = soundtouch_createInstance() else { throw AudioError.processing("SoundTouch could not start") }
        self.handle = handle
        soundtouch_setSampleRate(handle, UInt32(sampleRate))
        soundtouch_setChannels(handle, 1)
        // Speech's settings (SoundTouch's own advice): short sequences keep the latency and the
        // blocks it hands out small.
        soundtouch_setSetting(handle, Self.sequence, 40)
        soundtouch_setSetting(handle, Self.seekWindow, 15)
        soundtouch_setSetting(handle, Self.overlap, 8)
        set(semitones: semitones)
    }

    deinit { soundtouch_destroyInstance(handle) }

    // SoundTouch's setting ids (SoundTouch.h): sequence, seek window and overlap (ms), and the
    // size of the blocks it hands out (samples, read only).
    private static let sequence: Int32 = 3
    private static let seekWindow: Int32 = 4
    private static let overlap: Int32 = 5
    private static let outputBlock: Int32 = 7

    /// A new shift, from what comes in next.
    public func set(semitones: Double) {
        self.semitones = min(Self.range.upperBound, max(Self.range.lowerBound, semitones))
        soundtouch_setPitchSemiTones(handle, Float(self.semitones))
    }

    /// `samples` shifted, in place (the same count out as in, later by the shifter's latency).
    public func process(_ samples: inout [Float]) {
        _ = samples.withUnsafeBufferPointer { soundtouch_putSamples(handle, $0.baseAddress, UInt32($0.count)) }
        var chunk = [Float](repeating: 0, count: 4_096)
        while true {
            let received = chunk.withUnsafeMutableBufferPointer { soundtouch_receiveSamples(handle, $0.baseAddress, UInt32($0.count)) }
            if received == 0 { break }
            output += chunk.prefix(Int(received))
        }
        // Silence until a frame and one of SoundTouch's blocks are held, then steady frames: it
        // hands out a block at a time, so the reserve keeps every frame whole.
        if !flowing && output.count >= samples.count + Int(soundtouch_getSetting(handle, Self.outputBlock)) { flowing = true }
        guard flowing else {
            for index in samples.indices { samples[index] = 0 }
            return
        }
        let count = min(samples.count, output.count)
        for index in 0..<count { samples[index] = output[index] }
        for index in count..<samples.count { samples[index] = 0 }
        output.removeFirst(count)
        // Short all the same (a new shift made the blocks larger): the reserve is built again.
        if count < samples.count { flowing = false }
    }

    /// Forgets what is held (a new stream).
    public func reset() {
        soundtouch_clear(handle)
        output.removeAll()
        flowing = false
    }
}
