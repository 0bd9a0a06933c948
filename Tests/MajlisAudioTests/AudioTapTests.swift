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

    /// Multiplies what it is given by `gain`, and keeps a copy of what it was given.
    final class Scaler: AudioTap {
        let frames = Mutex<[([Int16], Int)]>([])
        let gain: Double
        init(gain: Double) { self.gain = gain }
        func process(_ frame: inout [Int16], channels: Int) {
            frames.withLock { $0.append((frame, channels)) }
            frame = frame.map { Int16(Double($0) * gain) }
        }
    }

    @Test func aTapGetsTwentyMillisecondsAtTheRateAndChannelsItAskedFor() throws {
        var tone = ToneGenerator(frequency: 1_000, amplitude: 0.3)
        let app = Scaler(gain: 1)
        let tap = try FormattedTap(app, sampleRate: 16_000, channels: 2, readOnly: true)
        var sent: [Int16] = []
        for _ in 0..<10 {
            let frame = tone.next()
            var seen = frame
            tap.process(&seen, channels: 1)
            #expect(seen == frame, "a read-only tap changes nothing")
            sent += frame
        }
        let frames = app.frames.withLock { $0 }
        #expect(frames.count == 10 && frames.allSatisfy { $0.0.count == 640 && $0.1 == 2 })
        // Both channels carry the tone, at 16 kHz: 1 kHz is still 1 kHz, at the level it had.
        let left = frames.dropFirst().flatMap { frame in stride(from: 0, to: frame.0.count, by: 2).map { frame.0[$0] } }
        let right = frames.dropFirst().flatMap { frame in stride(from: 1, to: frame.0.count, by: 2).map { frame.0[$0] } }
        #expect(left == right)
        #expect(ToneDetector.strongest(of: [500, 1_000, 3_000], in: left, sampleRate: 16_000) == 1_000)
        #expect(abs(LevelMeter.dBov(left) - LevelMeter.dBov(Array(sent.suffix(9 * 960)))) < 0.5)
    }

    @Test func whatAReadWriteTapChangesAtItsOwnRateGoesOnInTheEngine() throws {
        var tone = ToneGenerator(frequency: 440, amplitude: 0.3)
        let tap = try FormattedTap(Scaler(gain: 0.5), sampleRate: 8_000, channels: 1)
        var before: [Int16] = []
        var after: [Int16] = []
        for _ in 0..<20 {
            var frame = tone.next()
            before += frame
            tap.process(&frame, channels: 1)
            #expect(frame.count == 960)
            after += frame
        }
        // Half as loud (6 dB down), still 440 Hz, once the converters' delay has passed.
        let settled = Array(after.suffix(15 * 960))
        #expect(abs(LevelMeter.dBov(settled) - (LevelMeter.dBov(before) - 6.02)) < 0.5)
        #expect(ToneDetector.strongest(of: [220, 440, 880], in: settled) == 440)
        // On a stereo point (spatial playout) a mono tap hears both channels as one.
        let mono = Scaler(gain: 1)
        let stereo = try FormattedTap(mono, sampleRate: 48_000, channels: 1)
        var frame = (0..<960).flatMap { _ in [Int16(1_000), Int16(3_000)] }
        stereo.process(&frame, channels: 2)
        #expect(mono.frames.withLock { $0.first?.0 } == [Int16](repeating: 2_000, count: 960))
        #expect(frame == [Int16](repeating: 2_000, count: 1_920))
    }

    @Test func aTapAtARateWithoutWholeFramesIsRefused() {
        #expect(throws: AudioError.self) { try FormattedTap(Scaler(gain: 1), sampleRate: 11_025, channels: 1) }
        #expect(throws: AudioError.self) { try FormattedTap(Scaler(gain: 1), sampleRate: 16_000, channels: 3) }
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
