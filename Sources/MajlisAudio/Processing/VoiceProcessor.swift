import Foundation
import CSpeexDSP
import CVoiceProcessing
import MajlisProtocol

/// The microphone's voice processing, 20 ms frames of 48 kHz mono: echo cancellation (Speex's
/// adaptive filter and residual echo suppression, `EchoCanceller`), then noise suppression, gain
/// and voice detection (WebRTC's audio processing 0.3), and above `low` Speex's denoiser on what
/// WebRTC's suppressor left. What is about to be played goes to
/// `render`, so the echo canceller knows what to take out of what `capture` then hears.
///
/// Noise suppression engages only where there is noise: while the microphone's floor (the
/// quietest 10 ms of the last 1.5 s) stays under -65 dBFS it is left out, since a suppressor
/// working on clean speech only takes from the voice. Not thread-safe: one pipeline owns it.
public final class VoiceProcessor {
    // Audited: the handle is used by the owner's thread only (the class is not Sendable).
    private let handle: OpaquePointer
    private let chunk: Int
    private var echoCanceller: EchoCanceller?
    /// A second, gentler suppressor after WebRTC's (Speex's spectral denoiser, 15 dB at most):
    /// what WebRTC's leaves of the noise between words, it takes down further.
    private let residual: OpaquePointer
    /// Frames given to `render` and not yet matched with a capture.
    private var played: [[Int16]] = []
    /// The energy of each of the last 150 chunks (10 ms; infinite: not heard yet), how many were
    /// heard, and the noise suppressor's state.
    private var energies: [Double]
    private var energyIndex = 0
    private var chunksHeard = 0
    private var suppressing = false
    /// The settings in force.
    public private(set) var settings: VoiceProcessing

    /// Where noise suppression starts and stops, dBFS of the noise floor (with hysteresis).
    static let engageFloor = -62.0
    static let releaseFloor = -65.0

    public init(settings: VoiceProcessing = .standard) throws(AudioError) {
        guard let handle = majlis_voice_processor_create(Int32(AudioFormat.sampleRate)) else {
            throw AudioError.processing("voice processing cannot start")
        }
        guard let residual = speex_preprocess_state_init(Int32(AudioFormat.frameSamples), Int32(AudioFormat.sampleRate)) else {
            majlis_voice_processor_destroy(handle)
            throw AudioError.processing("the residual noise suppressor could not start")
        }
        var on: Int32 = 1, depth: Int32 = -15
        speex_preprocess_ctl(residual, SPEEX_PREPROCESS_SET_DENOISE, &on)
        speex_preprocess_ctl(residual, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &depth)
        self.residual = residual
        self.handle = handle
        chunk = AudioFormat.sampleRate / 100
        energies = Array(repeating: .infinity, count: 150)
        self.settings = settings
        try apply(settings)
    }

    deinit {
        speex_preprocess_state_destroy(residual)
        majlis_voice_processor_destroy(handle)
    }

    /// Changes what is done, from the next frame on.
    public func apply(_ settings: VoiceProcessing) throws(AudioError) {
        if settings.echoCancellation && echoCanceller == nil {
            echoCanceller = try EchoCanceller()
        } else if !settings.echoCancellation {
            echoCanceller = nil
            played.removeAll()
        }
        self.settings = settings
        try configure()
    }

    private func configure() throws(AudioError) {
        let levels: [VoiceProcessing.Level: Int32] = [.off: -1, .low: 0, .moderate: 1, .high: 2, .veryHigh: 3]
        let noise = suppressing ? levels[settings.noiseSuppression] ?? -1 : -1
        let status = majlis_voice_processor_configure(handle, -1, noise, settings.automaticGain ? 1 : 0)
        guard status == 0 else { throw AudioError.processing("the voice processor refused its settings (\(status))") }
    }

    /// The far end: a frame about to be played.
    public func render(_ frame: [Int16]) {
        guard echoCanceller != nil else { return }
        // The reference must not come later than its echo (the filter reaches 150 ms forward
        // only): a capture takes the oldest of the last two frames played, and what played while
        // nobody captured (not publishing, a stall) is let go.
        played.append(frame)
        if played.count > 2 { played.removeFirst(played.count - 2) }
    }

    /// The near end: a frame of the microphone, processed in place.
    public func capture(_ frame: inout [Int16]) {
        guard frame.count == AudioFormat.frameSamples else { return }
        if let echoCanceller {
            let far = played.isEmpty ? [Int16](repeating: 0, count: frame.count) : played.removeFirst()
            echoCanceller.process(&frame, played: far)
        }
        followNoiseFloor(frame)
        guard settings.noiseSuppression != .off && suppressing || settings.automaticGain else {
            voiceDetected = false
            return
        }
        var voiced = false
        frame.withUnsafeMutableBufferPointer { buffer in
            var start = 0
            while start + chunk <= buffer.count {
                _ = majlis_voice_processor_capture(handle, buffer.baseAddress! + start, 0)
                if majlis_voice_processor_has_voice(handle) != 0 { voiced = true }
                start += chunk
            }
        }
        if isSuppressingNoise && settings.noiseSuppression != .low { _ = speex_preprocess_run(residual, &frame) }
        voiceDetected = voiced
    }

    /// Keeps the noise floor and engages or releases the suppressor as it crosses its marks.
    private func followNoiseFloor(_ frame: [Int16]) {
        guard settings.noiseSuppression != .off else { return }
        var start = 0
        while start + chunk <= frame.count {
            var sum = 0.0
            for index in start..<start + chunk { sum += Double(frame[index]) * Double(frame[index]) }
            energies[energyIndex] = sum / Double(chunk)
            energyIndex = (energyIndex + 1) % energies.count
            chunksHeard += 1
            start += chunk
        }
        // Half a second heard before a first judgement: a voice from the first moment is no floor.
        guard chunksHeard >= 50 else { return }
        let floor = 10 * log10(max(1e-3, energies.min() ?? 0) / (32_768.0 * 32_768.0))
        let wanted = suppressing ? floor > Self.releaseFloor : floor > Self.engageFloor
        if wanted != suppressing {
            suppressing = wanted
            try? configure()
        }
    }

    /// Whether the noise suppressor is at work now (there is noise to take out).
    public var isSuppressingNoise: Bool { suppressing && settings.noiseSuppression != .off }

    /// Whether the last captured frame held voice (while noise suppression or gain runs).
    public private(set) var voiceDetected = false
}
