import CSoundTouch

/// Moves a voice's pitch by semitones without changing its speed (SoundTouch: time-stretched by
/// overlap-add, then resampled back). It holds back about 60 ms of audio to do so; what comes out
/// is the same length as what goes in.
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
        set(semitones: semitones)
    }

    deinit { soundtouch_destroyInstance(handle) }

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
        // Silence until a frame's worth is held in reserve, then steady frames: SoundTouch hands
        // out in its own blocks, so the reserve keeps every frame whole.
        if !flowing && output.count >= 2 * samples.count { flowing = true }
        guard flowing else {
            for index in samples.indices { samples[index] = 0 }
            return
        }
        let count = min(samples.count, output.count)
        for index in 0..<count { samples[index] = output[index] }
        for index in count..<samples.count { samples[index] = 0 }
        output.removeFirst(count)
    }

    /// Forgets what is held (a new stream).
    public func reset() {
        soundtouch_clear(handle)
        output.removeAll()
        flowing = false
    }
}
