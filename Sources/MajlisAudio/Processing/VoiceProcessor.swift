import Foundation
import CVoiceProcessing
import MajlisProtocol

/// The microphone's voice processing, 20 ms frames of 48 kHz mono: echo cancellation
/// (`EchoCanceller`: an adaptive filter given what was played as it reaches the microphone), then
/// noise suppression (`NoiseSuppressor`, which follows the noise, not the loudness, hears a voice in
/// the talk behind it, and takes out what the canceller left of the echo), then voice detection (WebRTC's audio processing 0.3) and automatic gain
/// (`AutomaticGain`, one slow gain for the voice). What is about to be played goes to `render`, so
/// the echo canceller knows what to take out of what `capture` then hears. Not thread-safe: one
/// pipeline owns it.
public final class VoiceProcessor {
    // Audited: the handle is used by the owner's thread only (the class is not Sendable).
    private let detector: OpaquePointer
    private var echoCanceller: EchoCanceller?
    private var suppressor: NoiseSuppressor?
    private var gain: AutomaticGain?
    private let chunk = AudioFormat.sampleRate / 100
    /// The settings in force.
    public private(set) var settings: VoiceProcessing
    /// How long after `render` a frame is heard from the speaker, ms (the playout buffer): the
    /// echo canceller's first guess, until it has measured the delay itself.
    public var playbackDelay = 60

    /// The deepest cut of each noise suppression level, dB.
    static let floors: [VoiceProcessing.Level: Double] = [.low: -12, .moderate: -18, .high: -25, .veryHigh: -32]
    /// Noise at or above this level (dBFS) is being taken out.
    static let audibleNoise = -70.0

    public init(settings: VoiceProcessing = .standard) throws(AudioError) {
        guard let detector = majlis_voice_processor_create(Int32(AudioFormat.sampleRate)) else {
            throw AudioError.processing("voice processing cannot start")
        }
        guard majlis_voice_processor_configure(detector, -1, -1, 0) == 0 else {
            majlis_voice_processor_destroy(detector)
            throw AudioError.processing("voice detection cannot start")
        }
        self.detector = detector
        self.settings = settings
        try apply(settings)
    }

    deinit {
        majlis_voice_processor_destroy(detector)
    }

    /// Changes what is done, from the next frame on.
    public func apply(_ settings: VoiceProcessing) throws(AudioError) {
        if settings.echoCancellation && echoCanceller == nil {
            echoCanceller = EchoCanceller(delayGuess: playbackDelay)
        } else if !settings.echoCancellation {
            echoCanceller = nil
        }
        // The suppressor also takes out what the echo canceller leaves; without noise
        // suppression it does only that, as deep as `high` would.
        let floor = Self.floors[settings.noiseSuppression] ?? (settings.echoCancellation ? Self.floors[.high] : nil)
        if let floor {
            if suppressor == nil { suppressor = NoiseSuppressor(floor: floor) }
            suppressor?.floor = floor
            suppressor?.followsNoise = settings.noiseSuppression != .off
        } else {
            suppressor = nil
        }
        if settings.automaticGain {
            if gain == nil { gain = AutomaticGain() }
        } else {
            gain = nil
        }
        self.settings = settings
    }

    /// The far end: a frame about to be played.
    public func render(_ frame: [Int16]) {
        guard frame.count == AudioFormat.frameSamples else { return }
        echoCanceller?.played(frame)
    }

    /// The near end: a frame of the microphone, processed in place.
    public func capture(_ frame: inout [Int16]) {
        guard frame.count == AudioFormat.frameSamples else { return }
        let echo = echoCanceller?.process(&frame)
        suppressor?.process(&frame, echo: echo)
        var voiced = false
        frame.withUnsafeMutableBufferPointer { buffer in
            var start = 0
            while start + chunk <= buffer.count {
                _ = majlis_voice_processor_capture(detector, buffer.baseAddress! + start, 0)
                if majlis_voice_processor_has_voice(detector) != 0 { voiced = true }
                start += chunk
            }
        }
        gain?.process(&frame, voiced: voiced, echoing: echoCanceller?.isEchoing ?? false)
        voiceDetected = voiced
    }

    /// Whether the noise suppressor is at work now (there is noise to take out).
    public var isSuppressingNoise: Bool { suppressor?.followsNoise == true && (suppressor?.noiseLevel ?? -96) >= Self.audibleNoise }

    /// The echo's delay the canceller works with (ms), and whether it measured it (nil: off).
    public var echoDelay: (milliseconds: Int, measured: Bool)? { echoCanceller?.delay }

    /// Whether the last captured frame held voice.
    public private(set) var voiceDetected = false
}
