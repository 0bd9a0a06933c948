import CSpeexDSP
import Foundation

/// Takes what the speaker played out of what the microphone heard: Speex's multi-delay block
/// frequency-domain adaptive filter (150 ms of echo path), then its preprocessor's residual echo
/// suppression (40 dB while only the far end speaks, 15 dB while both do, so a voice over the
/// echo is kept). 20 ms frames of 48 kHz mono. Not thread-safe: one pipeline owns it.
///
/// The filter is given what was played as it reaches the microphone: `EchoDelayEstimator` finds
/// how long after it was handed over that is (the playout buffer, the sound server, the air), and
/// the filter starts `lead` before it. With the delay left to the filter, the playout buffer
/// alone (60 ms) took a third of its 150 ms, and a sound server's buffers could take it all.
/// Measured (`majlis bench audio`) through a room ringing for 280 ms with the echo 6 dB under the
/// playback, heard 105 ms after it was handed over: ERLE 31-39 dB, the near end of double talk
/// PESQ-WB 2.8. A 200 ms filter: 32 dB and 2.75; 300 ms, 35 dB and 2.9 and 450 ms, 33 dB and 2.8
/// (with the delay known); 10 ms blocks instead of 20, 28 dB and 2.6. WebRTC 0.3's canceller
/// reached 46 dB but left the near end at 1.2: its nonlinear stage takes the voice with the echo.
final class EchoCanceller {
    // Audited: both states are used by the owner's thread only.
    private let echo: OpaquePointer
    private let preprocess: OpaquePointer
    private let frame: Int
    private var estimator: EchoDelayEstimator
    /// What was played, the last `Self.memory` samples.
    private var history: [Int16] = []
    /// The delay the filter is aligned for, ms.
    private var aligned: Int

    /// How far ahead of the echo's estimated arrival the filter's reference starts, ms (its
    /// estimate is 10 ms blocks of a smeared loudness: the direct sound can come sooner).
    static let lead = 20
    static let memory = AudioFormat.sampleRate
    /// Played frames quieter than -60 dBFS are silence; the residual echo suppressor stays on for
    /// 2 s of it (beyond the delay): switched off and on in the pauses of a far end's speech, it
    /// cost the near end of double talk 0.4 PESQ-WB (2.4 against 2.8).
    static let quiet = pow(32_768 * pow(10, -60.0 / 20), 2)
    static let ringing = 2_000
    /// Played frames in a row that were silent (counted up to a minute; from the start: nothing
    /// played yet).
    private var quietFrames = longQuiet
    static let longQuiet = 3_000

    /// The delay the filter is aligned for now, ms, and whether it was measured.
    var delay: (milliseconds: Int, measured: Bool) { (estimator.delay, estimator.measured) }

    init(sampleRate: Int = AudioFormat.sampleRate, frameSamples: Int = AudioFormat.frameSamples, tail: Int = 150, delayGuess: Int = 60) throws(AudioError) {
        guard let echo = speex_echo_state_init(Int32(frameSamples), Int32(sampleRate * tail / 1_000)) else {
            throw AudioError.processing("the echo canceller could not start")
        }
        guard let preprocess = speex_preprocess_state_init(Int32(frameSamples), Int32(sampleRate)) else {
            speex_echo_state_destroy(echo)
            throw AudioError.processing("the echo suppressor could not start")
        }
        self.echo = echo
        self.preprocess = preprocess
        estimator = EchoDelayEstimator(guess: delayGuess)
        aligned = delayGuess
        frame = frameSamples
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

    /// A frame handed to the speaker.
    func played(_ samples: [Int16]) {
        estimator.played(samples)
        let energy = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))
        quietFrames = energy < Self.quiet ? min(quietFrames + 1, Self.longQuiet) : 0
        history += samples
        if history.count > Self.memory * 2 { history.removeFirst(history.count - Self.memory) }
    }

    /// Whether an echo of what was played may be in what the microphone hears now.
    var isEchoing: Bool { quietFrames * AudioFormat.frameMilliseconds < aligned + Self.ringing }

    /// One frame of the microphone, heard before the frame played in the same moment.
    func process(_ microphone: inout [Int16]) {
        guard microphone.count == frame else { return }
        estimator.heard(microphone)
        if estimator.delay < aligned - Self.lead || estimator.delay > aligned + Self.lead {
            // The echo begins before the filter's reference, or too much of the filter is spent
            // before it begins: what it learnt is of another alignment.
            speex_echo_state_reset(echo)
            aligned = estimator.delay
        }
        // The reference starts `lead` before the echo; it cannot start later than what was played.
        let back = min(Self.memory, max(frame, (aligned - Self.lead) * AudioFormat.sampleRate / 1_000))
        var reference = [Int16](repeating: 0, count: frame)
        let start = history.count - back
        for index in 0..<frame where start + index >= 0 && start + index < history.count {
            reference[index] = history[start + index]
        }
        // The residual echo suppressor's output only where an echo can be: its spectral gain,
        // used in silence from the far end, cost speech in pink noise 0.4 of the noise
        // suppressor's 0.5 PESQ-WB gain. It runs all the same, so its estimates stay current.
        var cancelled = [Int16](repeating: 0, count: frame)
        speex_echo_cancellation(echo, microphone, reference, &cancelled)
        var suppressed = cancelled
        speex_preprocess_run(preprocess, &suppressed)
        microphone = isEchoing ? suppressed : cancelled
    }
}
