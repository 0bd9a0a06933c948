import CSpeexDSP

/// Takes what the speaker played out of what the microphone heard: Speex's multi-delay block
/// frequency-domain adaptive filter (150 ms of echo path), then its preprocessor's residual echo
/// suppression (40 dB while only the far end speaks, 15 dB while both do, so a voice over the
/// echo is kept). 20 ms frames of 48 kHz mono. Not thread-safe: one pipeline owns it.
final class EchoCanceller {
    // Audited: both states are used by the owner's thread only.
    private let echo: OpaquePointer
    private let preprocess: OpaquePointer
    private let frame: Int
    private var output: [Int16]

    init(sampleRate: Int = AudioFormat.sampleRate, frameSamples: Int = AudioFormat.frameSamples, tail: Int = 150) throws(AudioError) {
        guard let echo = speex_echo_state_init(Int32(frameSamples), Int32(sampleRate * tail / 1_000)) else {
            throw AudioError.processing("the echo canceller could not start")
        }
        guard let preprocess = speex_preprocess_state_init(Int32(frameSamples), Int32(sampleRate)) else {
            speex_echo_state_destroy(echo)
            throw AudioError.processing("the echo suppressor could not start")
        }
        self.echo = echo
        self.preprocess = preprocess
        frame = frameSamples
        output = [Int16](repeating: 0, count: frameSamples)
        var rate = Int32(sampleRate)
        speex_echo_ctl(echo, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
        // The residual echo is suppressed through the preprocessor's spectral gain, which is its
        // denoiser: on, but holding noise back by 1 dB only (noise is the noise suppressor's job).
        var on: Int32 = 1, noise: Int32 = -1, alone: Int32 = -40, together: Int32 = -15
        speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_DENOISE, &on)
        speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &noise)
        speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_ECHO_SUPPRESS, &alone)
        speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE, &together)
        speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_ECHO_STATE, UnsafeMutableRawPointer(echo))
    }

    deinit {
        speex_preprocess_state_destroy(preprocess)
        speex_echo_state_destroy(echo)
    }

    /// One frame of the microphone, with the frame the speaker played at the same moment.
    func process(_ microphone: inout [Int16], played: [Int16]) {
        guard microphone.count == frame, played.count == frame else { return }
        speex_echo_cancellation(echo, microphone, played, &output)
        speex_preprocess_run(preprocess, &output)
        microphone = output
    }
}
