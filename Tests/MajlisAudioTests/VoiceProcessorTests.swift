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
        let figures = try await offPoolInPairs { try ToolboxTrial.noiseSuppression(speech: SpeechSample.make(), snr: 10, level: VoiceProcessing.standard.noiseSuppression) }
        print(String(format: "noise suppression: PESQ %.2f -> %.2f; clean %.2f of %.2f", figures.noisy, figures.suppressed, figures.clean, figures.reference))
        #expect(figures.improvement >= 0.4, "PESQ \(figures.noisy) -> \(figures.suppressed)")
        #expect(figures.cleanLoss <= 0.1, "clean speech \(figures.clean) of \(figures.reference)")
    }

    @Test func echoIsCancelledAndANearVoiceOverItIsKept() async throws {
        let figures = try await offPoolInPairs {
            let far = try SpeechSample.make()
            let near = try SpeechSample.make("Good evening. Can everyone hear me now? I am speaking from my seat, while the music plays.")
            return try ToolboxTrial.echoCancellation(farEnd: far, nearEnd: near, seed: 3)
        }
        print(String(format: "echo cancellation: ERLE %.1f dB; double talk PESQ %.2f (%.2f with the echo left in)", figures.erle, figures.doubleTalk, figures.doubleTalkUncancelled))
        #expect(figures.erle >= 30, "ERLE \(figures.erle) dB")
        #expect(figures.doubleTalk >= 3.0, "double talk \(figures.doubleTalk)")
        #expect(figures.doubleTalk > figures.doubleTalkUncancelled + 1)
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
}
