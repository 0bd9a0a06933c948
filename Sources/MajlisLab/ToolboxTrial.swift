import Foundation
import MajlisAudio
import MajlisProtocol

/// The audio toolbox measured against its goals, on synthesized scenes: noise suppression on
/// speech in pink noise, echo cancellation through a room's echo path with double talk, pitch
/// shifting on a voiced tone, the equalizer's band gains. The tests assert on it;
/// `majlis bench audio` prints it.
public enum ToolboxTrial {
    /// Noise suppression's effect, PESQ-WB, as the room hears it (through Opus at the voice
    /// profile's 32 kb/s): speech in noise sent as it is and through the standard processing,
    /// clean speech both ways.
    public struct NoiseFigures: Sendable {
        public var noisy: Double
        public var suppressed: Double
        /// Clean speech through the processing, and sent as it is.
        public var clean: Double
        public var reference: Double
        /// How much louder the processing made clean speech, dB (its active level).
        public var cleanLevelChange: Double
        /// The sounds judged, by name (`pink-noisy` or `babble-noisy`, `pink-suppressed` or
        /// `babble-suppressed`, `clean-processed`; 48 kHz mono).
        public var sounds: [String: [Int16]] = [:]
        public var improvement: Double { suppressed - noisy }
        public var cleanLoss: Double { reference - clean }
    }

    /// What the noise is.
    public enum Noise: String, Sendable, CaseIterable {
        /// Stationary: a fan, an air conditioner, a road.
        case pink
        /// Six people talking.
        case babble
    }

    /// `frames` (20 ms each) through `processor`'s capture side, then the far end's frame (silence
    /// if none) rendered, as a client's tick does: it sends, then plays what it heard.
    static func process(_ processor: VoiceProcessor, microphone: [Int16], farEnd: [Int16]? = nil) -> [Int16] {
        var output: [Int16] = []
        output.reserveCapacity(microphone.count)
        let silence = [Int16](repeating: 0, count: AudioFormat.frameSamples)
        var start = 0
        while start + AudioFormat.frameSamples <= microphone.count {
            var frame = Array(microphone[start..<start + AudioFormat.frameSamples])
            processor.capture(&frame)
            processor.render(farEnd.map { Array($0[start..<start + AudioFormat.frameSamples]) } ?? silence)
            output += frame
            start += AudioFormat.frameSamples
        }
        return output
    }

    /// Speech with `noise` `snr` dB under it, sent with the standard processing (echo
    /// cancellation, noise suppression at `level`, gain) and without; and clean speech both ways.
    public static func noiseSuppression(speech: [Int16], noise kind: Noise = .pink, snr: Double = 10, level: VoiceProcessing.Level = VoiceProcessing.standard.noiseSuppression, seed: UInt64 = 1) throws -> NoiseFigures {
        let settings = VoiceProcessing(echoCancellation: true, noiseSuppression: level, automaticGain: true)
        // A second of noise first, as a microphone hears the room before anyone speaks.
        let lead = [Int16](repeating: 0, count: AudioFormat.sampleRate)
        let reference = lead + speech
        let noise = kind == .babble ? try SpeechSample.babble(count: reference.count, seed: seed) : nil
        let noisy = SyntheticSound.noisy(reference, snr: snr, seed: seed, noise: noise)
        let suppressed = process(try VoiceProcessor(settings: settings), microphone: noisy)
        let clean = process(try VoiceProcessor(settings: settings), microphone: reference)
        // As the room hears it: through Opus as the voice profile sends it, on a perfect path.
        let trim = { (signal: [Int16]) in try PlainOpusBaseline.run(Array(signal.dropFirst(lead.count)), impairment: nil).pcm }
        let sent = try [noisy, suppressed, clean, reference].map(trim)
        let scores = try PESQJudge.scores(reference: speech, degraded: sent)
        var figures = NoiseFigures(
            noisy: scores[0], suppressed: scores[1], clean: scores[2], reference: scores[3],
            cleanLevelChange: 20 * log10(max(1, SyntheticSound.activeLevel(sent[2])) / max(1, SyntheticSound.activeLevel(sent[3]))))
        figures.sounds = ["\(kind.rawValue)-noisy": sent[0], "\(kind.rawValue)-suppressed": sent[1], "clean-processed": sent[2]]
        return figures
    }

    /// Echo cancellation's figures.
    public struct EchoFigures: Sendable {
        /// Echo return loss enhancement, dB (the echo's power in the microphone over what is left
        /// of it in what is sent), over 3 s once the far end spoke alone for `settle` seconds,
        /// and over 3 s from 5 s after the double talk ended.
        public var erle: Double
        public var erleAfterDoubleTalk: Double
        /// The near end's speech during double talk (both speaking), PESQ-WB against the near
        /// speech alone; and without cancellation (the echo left in) for comparison.
        public var doubleTalk: Double
        public var doubleTalkUncancelled: Double
        /// The microphone (echo, then echo and the near end) and what the canceller left of it.
        public var sounds: [String: [Int16]] = [:]
    }

    /// Far-end speech (looped) played by the client (`playbackDelay` ms after it is rendered, as
    /// its playout buffer holds it, and `deviceLatency` ms later again, which the client is not
    /// told: the sound server's and the device's buffers) into a room (reverberation time `reverberation` ms, the echo
    /// `echoLoss` dB under what is played) whose echo reaches the microphone; after `settle` + 3
    /// seconds the near end speaks too, then the far end goes on alone for 8 s. The standard
    /// processing (echo cancellation, noise suppression, gain) does what a user's client does.
    public static func echoCancellation(farEnd: [Int16], nearEnd: [Int16], settle: Double = 5, playbackDelay: Int = 60, deviceLatency: Int = 40, reverberation: Double = 280, echoLoss: Double = 6, seed: UInt64 = 1) throws -> EchoFigures {
        let rate = AudioFormat.sampleRate
        let frame = AudioFormat.frameSamples
        let settleSamples = Int(settle * Double(rate)) / frame * frame
        let window = 3 * rate
        let nearStart = settleSamples + window
        let talkCount = nearEnd.count / frame * frame
        let afterStart = nearStart + talkCount + 5 * rate
        let total = afterStart + window
        var far: [Int16] = []
        while far.count < total { far += farEnd + [Int16](repeating: 0, count: rate / 4) }
        far = Array(far.prefix(total))
        // The loudspeaker plays each frame `playbackDelay` + `deviceLatency` after it was
        // rendered; the room takes 5 ms more (1.7 m) and rings for 1.5 reverberation times.
        let heard = Double(playbackDelay + deviceLatency) + 5
        let path = SyntheticSound.echoPath(delay: heard, decay: reverberation, length: heard + 1.5 * reverberation, loss: echoLoss, seed: seed)
        let echo = SyntheticSound.convolve(far, path)
        var microphone = echo.map(SyntheticSound.clip)
        for (index, sample) in nearEnd.prefix(talkCount).enumerated() {
            microphone[nearStart + index] = SyntheticSound.clip(echo[nearStart + index] + Double(sample))
        }
        let processor = try VoiceProcessor(settings: .standard)
        processor.playbackDelay = playbackDelay
        let output = process(processor, microphone: microphone, farEnd: far)
        func erle(_ range: Range<Int>) -> Double {
            let echoPower = range.reduce(0.0) { $0 + echo[$1] * echo[$1] }
            let leftPower = range.reduce(0.0) { $0 + Double(output[$1]) * Double(output[$1]) }
            return 10 * log10(echoPower / max(1, leftPower))
        }
        let talk = nearStart..<(nearStart + talkCount)
        let reference = Array(nearEnd.prefix(talkCount))
        let scores = try PESQJudge.scores(reference: reference, degraded: [Array(output[talk]), Array(microphone[talk])])
        return EchoFigures(
            erle: erle(settleSamples..<nearStart), erleAfterDoubleTalk: erle(afterStart..<total),
            doubleTalk: scores[0], doubleTalkUncancelled: scores[1], sounds: ["echo-microphone": microphone, "echo-cancelled": output])
    }

    /// `input` through `effect`, 20 ms at a time (the whole frames of it).
    public static func applied(_ effect: VoiceEffect, to input: [Int16]) throws -> [Int16] {
        let effects = try VoiceEffects(effect)
        var output: [Int16] = []
        var start = 0
        while start + AudioFormat.frameSamples <= input.count {
            var frame = Array(input[start..<start + AudioFormat.frameSamples])
            effects.process(&frame)
            output += frame
            start += AudioFormat.frameSamples
        }
        return output
    }

    /// The pitch measured after shifting a 150 Hz voiced tone by `semitones`, in semitones.
    public static func pitchShift(semitones: Double) throws -> Double {
        let base = 150.0
        let tone = SyntheticSound.harmonicTone(frequency: base, seconds: 1.5)
        let output = try applied(VoiceEffect(pitch: semitones), to: tone)
        // Past the shifter's start, a steady stretch.
        let measured = SyntheticSound.fundamental(of: Array(output[(output.count / 2)...]))
        return 12 * log2(measured / base)
    }

    /// Each band's gain measured with a tone at its centre through the equalizer set to `gains`.
    public static func equalizerBands(gains: [Double]) throws -> [Double] {
        try Equalizer.frequencies.map { frequency in
            // (Its harmonics pass through other bands; only the tone's own frequency is measured.)
            let tone = SyntheticSound.harmonicTone(frequency: frequency, seconds: max(0.5, 40 / frequency), amplitude: 0.05)
            let output = try applied(VoiceEffect(equalizer: gains), to: tone)
            let steady = output.count / 2
            let input = Array(tone.prefix(output.count)[steady...])
            return SyntheticSound.level(of: frequency, in: Array(output[steady...])) - SyntheticSound.level(of: frequency, in: input)
        }
    }

    /// Each band's gain as the room hears it: pink noise through the equalizer set to `gains`
    /// and then Opus as `profile` sends it, against the same noise through Opus alone, over a
    /// third of an octave around each band's centre (Welch's average of 4096-point spectra).
    /// A codec carries a band's energy, not every shape within it: where its bands are wide and
    /// its bits few, a cut narrower than its band is partly filled in.
    public static func equalizerBandsHeard(gains: [Double], profile: AudioProfile?, seed: UInt64 = 1) throws -> [Double] {
        let noise = SyntheticSound.pinkNoise(count: 4 * AudioFormat.sampleRate, seed: seed).map { SyntheticSound.clip($0 * 3_000) }
        func heard(_ input: [Int16]) throws -> [Double] {
            let output = try profile.map { try PlainOpusBaseline.run(input, impairment: nil, bitrate: $0.bitrate, music: $0 != .speech).pcm } ?? input
            return averageSpectrum(Array(output.dropFirst(AudioFormat.sampleRate / 2)))
        }
        let flat = try heard(applied(VoiceEffect(), to: noise))
        let equalized = try heard(applied(VoiceEffect(equalizer: gains), to: noise))
        let binWidth = Double(AudioFormat.sampleRate) / 4_096
        return Equalizer.frequencies.map { centre in
            let lowest = Int((centre / pow(2, 1.0 / 6) / binWidth).rounded())
            let bins = lowest...max(lowest, Int((centre * pow(2, 1.0 / 6) / binWidth).rounded()))
            let energy = { (spectrum: [Double]) in bins.reduce(0.0) { $0 + spectrum[$1] } }
            return 10 * log10(max(1e-12, energy(equalized)) / max(1e-12, energy(flat)))
        }
    }

    /// The mean power spectrum of `samples`: Hann-windowed 4096-point transforms, half
    /// overlapping.
    static func averageSpectrum(_ samples: [Int16]) -> [Double] {
        let size = 4_096
        var sum = [Double](repeating: 0, count: size / 2)
        let window = (0..<size).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size)) }
        for start in stride(from: 0, through: samples.count - size, by: size / 2) {
            var real = (0..<size).map { Double(samples[start + $0]) * window[$0] }
            var imaginary = [Double](repeating: 0, count: size)
            FFT.transform(&real, &imaginary, inverse: false)
            for bin in 0..<size / 2 { sum[bin] += real[bin] * real[bin] + imaginary[bin] * imaginary[bin] }
        }
        return sum
    }

    /// What a spatialized source sounds like at the ears.
    public struct SpatialFigures: Sendable {
        /// How much earlier the left ear hears it than the right, ms (negative: the right ear
        /// first): measured on the output, and what the HRTF's own filters say.
        public var interauralDelay: Double
        public var hrtfDelay: Double
        /// How much louder the left ear hears it, dB.
        public var levelDifference: Double
        /// The rendered stereo (left, right, ...).
        public var stereo: [Int16]
    }

    /// Half a second of white noise from `position`, through the spatializer.
    public static func spatial(_ position: SpatialPosition, seed: UInt64 = 1) throws -> SpatialFigures {
        let hrtf = try HRTF()
        let spatializer = Spatializer(hrtf: hrtf)
        spatializer.positions[7] = position
        var random = SplitMix64(seed: seed)
        let noise = (0..<(AudioFormat.sampleRate / 2)).map { _ in Int16.random(in: -8_000...8_000, using: &random) }
        var stereo: [Int16] = []
        var start = 0
        while start + AudioFormat.frameSamples <= noise.count {
            stereo += spatializer.render([(7, Array(noise[start..<start + AudioFormat.frameSamples]))])
            start += AudioFormat.frameSamples
        }
        let left = stride(from: 0, to: stereo.count, by: 2).map { Double(stereo[$0]) }
        let right = stride(from: 1, to: stereo.count, by: 2).map { Double(stereo[$0]) }
        // The lag that best lines the right ear up with the left, within 1.5 ms either way.
        let window = 4_800..<(left.count - 100)
        let lags = -72...72
        let best = lags.map { lag in (lag, window.reduce(0.0) { $0 + left[$1] * right[$1 + lag] }) }.max { $0.1 < $1.1 }?.0 ?? 0
        let energy = { (x: [Double]) in x[window].reduce(0) { $0 + $1 * $1 } }
        // The HRTF's own interaural delay: where its two ears' responses line up best.
        let filters = hrtf.filters(for: position)
        func match(_ lag: Int) -> Float {
            var sum: Float = 0
            for (index, value) in filters.left.enumerated() {
                let other = index + lag + filters.rightDelay - filters.leftDelay
                if other >= 0 && other < filters.right.count { sum += value * filters.right[other] }
            }
            return sum
        }
        let hrtfLag = lags.map { ($0, match($0)) }.max { $0.1 < $1.1 }?.0 ?? 0
        return SpatialFigures(
            interauralDelay: Double(best) / 48, hrtfDelay: Double(hrtfLag) / 48,
            levelDifference: 10 * log10(energy(left) / max(1, energy(right))), stereo: stereo)
    }
}

