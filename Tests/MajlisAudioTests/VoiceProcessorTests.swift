import Foundation
import MajlisAudio
import MajlisLab
import MajlisProtocol
import MajlisTestSupport
import Testing

/// Echo cancellation and noise suppression judged by PESQ-WB and echo return loss enhancement
/// on espeak-ng speech, in pink noise and through a room's echo path made in the test (each on
/// a thread of its own: the async pool stays free for the tests that run servers).
@Suite struct VoiceProcessorTests {
    @Test func noiseSuppressionLiftsSpeechInPinkNoiseAndLeavesCleanSpeechAlone() async throws {
        let figures = try await offPoolInPairs { try ToolboxTrial.noiseSuppression(speech: SpeechSample.make(), snr: 10) }
        print(String(
            format: "noise suppression: PESQ %.2f -> %.2f; clean %.2f of %.2f, level %+.1f dB",
            figures.noisy, figures.suppressed, figures.clean, figures.reference, figures.cleanLevelChange))
        // (Measured +0.59 to +0.62 over `majlis bench audio`'s three seeds; this is its first.)
        #expect(figures.improvement >= 0.5, "PESQ \(figures.noisy) -> \(figures.suppressed)")
        #expect(figures.cleanLoss <= 0.1, "clean speech \(figures.clean) of \(figures.reference)")
        #expect(abs(figures.cleanLevelChange) <= 3, "the gain moved clean speech by \(figures.cleanLevelChange) dB")
    }

    @Test func noiseSuppressionLiftsSpeechInBabble() async throws {
        let figures = try await offPoolInPairs { try ToolboxTrial.noiseSuppression(speech: SpeechSample.make(), noise: .babble, snr: 10) }
        print(String(format: "noise suppression in babble: PESQ %.2f -> %.2f", figures.noisy, figures.suppressed))
        // (Measured +0.27 to +0.33 over `majlis bench audio`'s three seeds, this one +0.30; +0.07 to
        // +0.12 before the speech mask.)
        #expect(figures.improvement >= 0.2, "PESQ \(figures.noisy) -> \(figures.suppressed)")
    }

    @Test func echoIsCancelledThroughDoubleTalkAndANearVoiceOverItIsKept() async throws {
        let figures = try await offPoolInPairs {
            let far = try SpeechSample.make()
            let near = try SpeechSample.make("Good evening. Can everyone hear me now? I am speaking from my seat, while the music plays.")
            return try ToolboxTrial.echoCancellation(farEnd: far, nearEnd: near, seed: 3)
        }
        print(String(
            format: "echo cancellation: ERLE %.1f dB, %.1f dB after double talk; double talk PESQ %.2f (%.2f with the echo left in)",
            figures.erle, figures.erleAfterDoubleTalk, figures.doubleTalk, figures.doubleTalkUncancelled))
        // (Measured over `majlis bench audio`'s three rooms: 33.0-34.8 dB, 57.6-65.0 dB after
        // double talk, its near end 3.70-3.77.)
        #expect(figures.erle >= 30, "ERLE \(figures.erle) dB")
        #expect(figures.erleAfterDoubleTalk >= 25, "ERLE after double talk \(figures.erleAfterDoubleTalk) dB")
        #expect(figures.doubleTalk >= 3, "double talk \(figures.doubleTalk)")
        #expect(figures.doubleTalk > figures.doubleTalkUncancelled + 1)
    }

    @Test func aHigherVoiceSpeakingOverTheEchoIsNotLearntAsEcho() async throws {
        let figures = try await offPoolInPairs {
            let far = try SpeechSample.make(voice: "en-us+f3")
            let near = try SpeechSample.make("Good evening. Can everyone hear me now? I am speaking from my seat, while the music plays.", voice: "en-us+f3")
            return try ToolboxTrial.echoCancellation(farEnd: far, nearEnd: near, seed: 1)
        }
        print(String(
            format: "echo cancellation, en-us+f3: ERLE %.1f dB, %.1f dB after double talk; double talk PESQ %.2f (%.2f with the echo left in)",
            figures.erle, figures.erleAfterDoubleTalk, figures.doubleTalk, figures.doubleTalkUncancelled))
        // (Measured 34.6 dB after double talk and 2.49, where the foreground took the background's
        // weights in double talk: 1.7 dB and 1.21. The first 5 s reach 20-25 dB with this voice,
        // short of the 30 the default voice reaches.)
        #expect(figures.erleAfterDoubleTalk >= 15, "ERLE after double talk \(figures.erleAfterDoubleTalk) dB")
        #expect(figures.doubleTalk > figures.doubleTalkUncancelled + 0.8, "double talk \(figures.doubleTalk)")
    }

    @Test func processingOffLeavesTheMicrophoneAsItIs() throws {
        let pipeline = try VoicePipeline(processing: .off)
        var tone = ToneGenerator(frequency: 440, amplitude: 0.3)
        for _ in 0..<20 {
            let frame = tone.next()
            var processed = frame
            pipeline.render(frame)
            pipeline.capture(&processed)
            #expect(processed == frame)
        }
    }

    @Test func theNoiseSuppressorEngagesOnlyWhereThereIsNoise() async throws {
        let (clean, noisy) = try await offPoolInPairs { try Self.suppressing() }
        #expect(!clean, "a voice with clean pauses: nothing to suppress")
        #expect(noisy, "the same in a noisy room")
    }

    /// Whether the suppressor is at work after a voice with clean pauses, and after the same in noise.
    static func suppressing() throws -> (clean: Bool, noisy: Bool) {
        let processor = try VoiceProcessor(settings: VoiceProcessing(echoCancellation: false, noiseSuppression: .high, automaticGain: false))
        var tone = ToneGenerator(frequency: 300, amplitude: 0.2)
        let silence = [Int16](repeating: 0, count: AudioFormat.frameSamples)
        // A voice with clean pauses: nothing to suppress.
        for index in 0..<100 {
            var frame = index % 10 < 5 ? tone.next() : silence
            processor.capture(&frame)
        }
        let clean = processor.isSuppressingNoise
        let noise = SyntheticSound.pinkNoise(count: 100 * AudioFormat.frameSamples, seed: 5)
        for index in 0..<100 {
            let voice = index % 10 < 5 ? tone.next() : silence
            var frame = (0..<AudioFormat.frameSamples).map { SyntheticSound.clip(Double(voice[$0]) + noise[index * AudioFormat.frameSamples + $0] * 1_000) }
            processor.capture(&frame)
        }
        return (clean, processor.isSuppressingNoise)
    }

    @Test func theEchoDelayIsFoundFromWhatWasPlayedAndHeard() throws {
        let speech = try SpeechSample.make(SpeechSample.sentence)
        let noise = SyntheticSound.pinkNoise(count: speech.count, seed: 9)
        let frame = AudioFormat.frameSamples
        // Heard 130 ms after it was played, 6 dB down, over noise 20 dB under it.
        let lag = 130 * 48
        var echo = EchoDelayEstimator(guess: 60)
        var alone = EchoDelayEstimator(guess: 60)
        var start = 0
        while start + frame <= speech.count {
            let heard = (start..<start + frame).map { index in
                SyntheticSound.clip((index >= lag ? Double(speech[index - lag]) / 2 : 0) + noise[index] * 150)
            }
            echo.heard(heard)
            echo.played(Array(speech[start..<start + frame]))
            // The microphone hears the same, and the speaker plays nothing.
            alone.heard(heard)
            alone.played([Int16](repeating: 0, count: frame))
            start += frame
        }
        #expect(echo.measured)
        #expect((120...140).contains(echo.delay), "measured \(echo.delay) ms")
        #expect(!alone.measured && alone.delay == 60)
    }

    @Test func theGainBringsAQuietVoiceUpSlowlyAndNeverLiftsAnEcho() {
        var tone = ToneGenerator(frequency: 300, amplitude: 0.01)
        var gain = AutomaticGain()
        var first: [Int16] = []
        var last: [Int16] = []
        // A voice at -43 dBFS: ten seconds of it.
        for index in 0..<500 {
            var frame = tone.next()
            gain.process(&frame, voiced: true)
            if index == 0 { first = frame }
            last = frame
        }
        let level = { (frame: [Int16]) in 20 * log10(Double(frame.map { abs(Int($0)) }.max() ?? 1)) }
        // Up by the most it may (18 dB), after 6 s at 3 dB a second.
        #expect(abs(level(last) - level(first) - 18) < 0.5, "lifted by \(level(last) - level(first)) dB")
        #expect(abs(gain.gain - 18) < 1e-9)

        // The same quiet sound while the speaker plays: it is an echo's residue, not lifted.
        var echoing = AutomaticGain()
        var loud = ToneGenerator(frequency: 300, amplitude: 0.1)
        for _ in 0..<100 {
            var frame = loud.next()
            echoing.process(&frame, voiced: true)
        }
        let before = echoing.gain
        for _ in 0..<250 {
            var frame = tone.next()
            echoing.process(&frame, voiced: true, echoing: true)
        }
        #expect(echoing.gain <= before, "rose from \(before) to \(echoing.gain) dB on an echo")

        // A loud voice is cut by 6 dB at most, and no peak passes -3 dBFS.
        var shout = ToneGenerator(frequency: 300, amplitude: 0.9)
        var cut = AutomaticGain()
        var peak = 0
        for _ in 0..<250 {
            var frame = shout.next()
            cut.process(&frame, voiced: true)
            peak = max(peak, frame.map { abs(Int($0)) }.max() ?? 0)
        }
        #expect(cut.gain >= -6)
        #expect(Double(peak) <= 32_767 * pow(10, -3.0 / 20) + 1)
    }
}
