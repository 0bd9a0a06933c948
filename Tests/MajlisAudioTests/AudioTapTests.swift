import MajlisAudio
import Synchronization
import Testing

/// The app's hooks on sound: taps that read or change frames where they sit, a source the app
/// pushes PCM into, and a sink it pulls the mix from.
@Suite struct AudioTapTests {
    /// Keeps a copy of every frame; `silence` makes it zero what it is given.
    final class Recorder: AudioTap {
        let frames = Mutex<[[Int16]]>([])
        let silence: Bool
        init(silence: Bool = false) { self.silence = silence }
        func process(_ frame: inout [Int16], channels: Int) {
            frames.withLock { $0.append(frame) }
            if silence { frame = [Int16](repeating: 0, count: frame.count) }
        }
    }

    @Test func tapsSeeAndChangeTheFramesWhereTheySit() throws {
        let pipeline = try VoicePipeline()
        var tone = ToneGenerator(frequency: 440, amplitude: 0.3)
        let voice = tone.next()
        let recording = Recorder(), playout = Recorder(), mix = Recorder(silence: true)
        pipeline.taps[.recording] = recording
        pipeline.taps[.mix] = mix
        pipeline.taps[.playout] = playout
        #expect(pipeline.send(voice) == voice)
        #expect(recording.frames.withLock { $0 } == [voice])
        // The mix tap silences what is heard: the playout tap, last, sees the silence.
        let played = pipeline.play(voice)
        #expect(played == [Int16](repeating: 0, count: 960))
        #expect(mix.frames.withLock { $0 } == [voice] && playout.frames.withLock { $0 } == [played])
        // A read-write tap on what is sent changes what is encoded.
        pipeline.taps[.sent] = Recorder(silence: true)
        #expect(pipeline.send(voice) == [Int16](repeating: 0, count: 960))
    }

    @Test func aPushedSourceHandsOutWhatWasPushedThenSilence() {
        let source = PushedSource(capacity: 2_000)
        source.push([Int16](repeating: 7, count: 1_500))
        #expect(source.nextFrame() == [Int16](repeating: 7, count: 960))
        #expect(source.nextFrame() == [Int16](repeating: 7, count: 540) + [Int16](repeating: 0, count: 420))
        source.push([Int16](repeating: 1, count: 3_000))
        #expect(source.waiting == 2_000, "older samples make way")
    }

    @Test func aPulledSinkGivesWhatWasPlayedAtThePullersPace() {
        let sink = PulledSink(channels: 1, capacity: 1_000)
        sink.play([Int16](repeating: 3, count: 960))
        #expect(sink.pull(480) == [Int16](repeating: 3, count: 480))
        #expect(sink.pull(600) == [Int16](repeating: 3, count: 480) + [Int16](repeating: 0, count: 120))
        sink.play([Int16](repeating: 4, count: 960))
        sink.play([Int16](repeating: 5, count: 960))
        #expect(sink.pull(1_000).first == 4, "at most a thousand samples wait")
    }
}
