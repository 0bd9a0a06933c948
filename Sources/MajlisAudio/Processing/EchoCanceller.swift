import Foundation

/// Takes what the speaker played out of what the microphone heard: `EchoFilter`, a 300 ms
/// adaptive filter (foreground and background), given what was played as it reaches the
/// microphone. What the filter leaves of the echo is the noise suppressor's to take out: the
/// canceller hands it the filter's echo estimate (`NoiseSuppressor.process(_:echo:)`). 20 ms
/// frames of 48 kHz mono. Not thread-safe: one pipeline owns it.
///
/// The filter is given what was played as it reaches the microphone: `EchoDelayEstimator` finds
/// how long after it was handed over that is (the playout buffer, the sound server, the air), and
/// the filter starts `lead` before it. With the delay left to the filter, the playout buffer
/// alone (60 ms) took a fifth of it, and a sound server's buffers could take it all.
/// Measured (`majlis bench audio`) through a room ringing for 280 ms with the echo 6 dB under the
/// playback, heard 105 ms after it was handed over, with the noise suppressor after it: ERLE
/// 5 s into far-end speech, after double talk, and the near end of double talk PESQ-WB are in
/// CHANGELOG.md. Speex's canceller (its 150 ms filter and residual echo suppressor) left the near
/// end of double talk at 2.75-2.87: its filter alone took 20 dB of echo where this one takes
/// 22-25, and the near end through it alone scored 2.4 against 3.6-3.7. WebRTC 0.3's canceller
/// reached 46 dB but left the near end at 1.2: its nonlinear stage takes the voice with the echo.
final class EchoCanceller {
    private var filter: EchoFilter
    private var estimator: EchoDelayEstimator
    /// What was played, the last `Self.memory` samples.
    private var history: [Int16] = []
    /// The delay the filter is aligned for, ms.
    private var aligned: Int

    /// How far ahead of the echo's estimated arrival the filter's reference starts, ms (its
    /// estimate is 10 ms blocks of a smeared loudness: the direct sound can come sooner).
    static let lead = 20
    /// The filter's partitions, ms, and how far the measured delay must be from the alignment
    /// for the filter to be realigned, ms, with what it learnt moved along. A first delay measured
    /// 40 ms after the guess (100 against 60, 0.8 s in), ERLE 5 s into far-end speech: starting
    /// the filter over, 25.8-27.4 dB; keeping the guess (the echo 65 ms into the filter),
    /// 27.6-30.6 dB; realigning what was learnt, 29.4-34.1 dB.
    static let partition = EchoFilter.block * 1_000 / AudioFormat.sampleRate
    static let realignment = 10
    static let memory = AudioFormat.sampleRate
    /// Played frames quieter than -60 dBFS are silence; an echo can be heard for 2 s of it
    /// (beyond the delay).
    static let quiet = pow(32_768 * pow(10, -60.0 / 20), 2)
    static let ringing = 2_000
    /// Played frames in a row that were silent (counted up to a minute; from the start: nothing
    /// played yet).
    private var quietFrames = longQuiet
    static let longQuiet = 3_000

    /// The delay the filter is aligned for now, ms, and whether it was measured.
    var delay: (milliseconds: Int, measured: Bool) { (estimator.delay, estimator.measured) }

    init(tail: Int = 300, delayGuess: Int = 60) {
        filter = EchoFilter(milliseconds: tail)
        estimator = EchoDelayEstimator(guess: delayGuess)
        aligned = delayGuess
    }

    /// How many samples back from the end of what was played the reference of a `frame`-sample
    /// frame begins: `lead` before the echo, and not later than what was played.
    private func offset(_ frame: Int) -> Int {
        min(Self.memory, max(frame, (aligned - Self.lead) * AudioFormat.sampleRate / 1_000))
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

    /// One frame of the microphone, heard before the frame played in the same moment, in place.
    /// Returns the filter's estimate of the echo in it (what it took out).
    func process(_ microphone: inout [Int16]) -> [Double] {
        let frame = microphone.count
        estimator.heard(microphone)
        let drift = estimator.delay - aligned
        if abs(drift) >= Self.realignment {
            // The echo moved (or was first measured): the reference moves by whole partitions,
            // and what the filter learnt moves with it.
            let before = offset(frame)
            aligned += Int((Double(drift) / Double(Self.partition)).rounded()) * Self.partition
            let shift = Int((Double(offset(frame) - before) / Double(EchoFilter.block)).rounded())
            let end = history.count - offset(frame)
            filter.realign(by: shift, past: history[max(0, end - Self.memory)..<max(0, end)].map(Double.init))
        }
        // The reference starts `lead` before the echo; it cannot start later than what was played.
        let start = history.count - offset(frame)
        var reference = [Double](repeating: 0, count: frame)
        for index in 0..<frame where start + index >= 0 && start + index < history.count {
            reference[index] = Double(history[start + index])
        }
        let heard = microphone.map(Double.init)
        var echo = [Double](repeating: 0, count: frame)
        var block = 0
        while block + EchoFilter.block <= frame {
            let range = block..<block + EchoFilter.block
            let (output, estimate) = filter.process(reference: reference[range], microphone: heard[range])
            for index in range {
                microphone[index] = Int16(max(-32_768, min(32_767, output[index - block].rounded())))
                echo[index] = estimate[index - block]
            }
            block += EchoFilter.block
        }
        return echo
    }
}
