import Foundation
import MajlisAudio
import MajlisProtocol

/// The audio toolbox measured against its goals, on synthesized scenes: noise suppression on
/// speech in pink noise, echo cancellation through a room's echo path with double talk, pitch
/// shifting on a voiced tone, the equalizer's band gains. The tests assert on it;
/// `majlis bench audio` prints it.
public enum ToolboxTrial {
    /// Noise suppression's effect, PESQ-WB.
    public struct NoiseFigures: Sendable {
        public var noisy: Double
        public var suppressed: Double
        /// Clean speech through the processor, and the clean reference against itself.
        public var clean: Double
        public var reference: Double
        /// The sounds judged, by name (`noisy`, `suppressed`; 48 kHz mono), to listen to.
        public var sounds: [String: [Int16]] = [:]
        public var improvement: Double { suppressed - noisy }
        public var cleanLoss: Double { reference - clean }
    }

    /// `frames` (20 ms each) through `processor`'s capture side, the far end (if any) rendered first.
    static func process(_ processor: VoiceProcessor, microphone: [Int16], farEnd: [Int16]? = nil) -> [Int16] {
        var output: [Int16] = []
        output.reserveCapacity(microphone.count)
        var start = 0
        while start + AudioFormat.frameSamples <= microphone.count {
            if let farEnd { processor.render(Array(farEnd[start..<start + AudioFormat.frameSamples])) }
            var frame = Array(microphone[start..<start + AudioFormat.frameSamples])
            processor.capture(&frame)
            output += frame
            start += AudioFormat.frameSamples
        }
        return output
    }

    /// Speech with pink noise `snr` dB under it, through noise suppression at `level` (no echo
    /// cancellation, no gain: what is judged is the suppressor alone).
    public static func noiseSuppression(speech: [Int16], snr: Double = 10, level: VoiceProcessing.Level = .veryHigh, seed: UInt64 = 1) throws -> NoiseFigures {
        let settings = VoiceProcessing(echoCancellation: false, noiseSuppression: level, automaticGain: false)
        // A second of noise first, as a microphone hears the room before anyone speaks.
        let lead = [Int16](repeating: 0, count: AudioFormat.sampleRate)
        let reference = lead + speech
        let noisy = SyntheticSound.noisy(reference, snr: snr, seed: seed)
        let suppressed = process(try VoiceProcessor(settings: settings), microphone: noisy)
        let clean = process(try VoiceProcessor(settings: settings), microphone: reference)
        let trim = { (signal: [Int16]) in Array(signal.dropFirst(lead.count)) }
        let scores = try PESQJudge.scores(reference: speech, degraded: [trim(noisy), trim(suppressed), trim(clean), speech])
        var figures = NoiseFigures(noisy: scores[0], suppressed: scores[1], clean: scores[2], reference: scores[3])
        figures.sounds = ["noisy": trim(noisy), "suppressed": trim(suppressed)]
        return figures
    }

    /// Echo cancellation's figures.
    public struct EchoFigures: Sendable {
        /// Echo return loss enhancement after `settle` seconds of far-end speech alone, dB: the
        /// echo's power in the microphone over what is left of it in the output.
        public var erle: Double
        /// The near end's speech during double talk (both speaking), PESQ-WB against the near
        /// speech alone; and without cancellation (the echo left in) for comparison.
        public var doubleTalk: Double
        public var doubleTalkUncancelled: Double
        /// The microphone (echo, then echo and the near end) and what the canceller left of it.
        public var sounds: [String: [Int16]] = [:]
    }

    /// Far-end speech (looped) played into a room whose echo path carries it to the microphone;
    /// after `settle` seconds the near end speaks too. The processor has the far end as its
    /// render stream.
    public static func echoCancellation(farEnd: [Int16], nearEnd: [Int16], settle: Double = 5, seed: UInt64 = 1) throws -> EchoFigures {
        let rate = AudioFormat.sampleRate
        let settleSamples = Int(settle * Double(rate)) / AudioFormat.frameSamples * AudioFormat.frameSamples
        let erleWindow = 3 * rate
        let total = settleSamples + erleWindow + nearEnd.count
        var far: [Int16] = []
        while far.count < total { far += farEnd + [Int16](repeating: 0, count: rate / 4) }
        far = Array(far.prefix(total))
        let echo = SyntheticSound.convolve(far, SyntheticSound.echoPath(seed: seed))
        // The near end speaks once the echo canceller had `settle` seconds and the ERLE window.
        let nearStart = settleSamples + erleWindow
        var microphone = echo.map(SyntheticSound.clip)
        for (index, sample) in nearEnd.enumerated() {
            microphone[nearStart + index] = SyntheticSound.clip(echo[nearStart + index] + Double(sample))
        }
        let settings = VoiceProcessing(echoCancellation: true, noiseSuppression: .off, automaticGain: false)
        let processor = try VoiceProcessor(settings: settings)
        let output = process(processor, microphone: microphone, farEnd: far)
        // ERLE over the window after settling, where only the far end speaks.
        let window = settleSamples..<nearStart
        let echoPower = window.reduce(0.0) { $0 + echo[$1] * echo[$1] }
        let leftPower = window.reduce(0.0) { $0 + Double(output[$1]) * Double(output[$1]) }
        let erle = 10 * log10(echoPower / max(1, leftPower))
        let talk = nearStart..<(nearStart + nearEnd.count / AudioFormat.frameSamples * AudioFormat.frameSamples)
        let reference = Array(nearEnd.prefix(talk.count))
        let scores = try PESQJudge.scores(reference: reference, degraded: [Array(output[talk]), Array(microphone[talk])])
        return EchoFigures(erle: erle, doubleTalk: scores[0], doubleTalkUncancelled: scores[1], sounds: ["echo-microphone": microphone, "echo-cancelled": output])
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

