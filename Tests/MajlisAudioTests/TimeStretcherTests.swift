import MajlisAudio
import Testing

/// Frames made a pitch period shorter or longer: the pitch stays, the seams do not show, and
/// only what is periodic (or quiet) is touched.
@Suite struct TimeStretcherTests {
    /// A voiced-like sound: 160 Hz (a period of 300 samples) with two harmonics.
    static func voice(frames: Int) -> [[Int16]] {
        var fundamental = ToneGenerator(frequency: 160, amplitude: 0.3)
        var second = ToneGenerator(frequency: 320, amplitude: 0.15)
        var third = ToneGenerator(frequency: 480, amplitude: 0.08)
        return (0..<frames).map { _ in
            zip(zip(fundamental.next(), second.next()), third.next()).map { Int16($0.0 + $0.1) + $1 }
        }
    }

    /// The largest step between neighbouring samples: a seam shows as a jump.
    static func largestStep(_ samples: [Int16]) -> Int {
        zip(samples, samples.dropFirst()).map { abs(Int($1) - Int($0)) }.max() ?? 0
    }

    @Test func aVoicedFrameLosesOrGainsWholePeriodsAndKeepsItsPitch() throws {
        let frames = Self.voice(frames: 50)
        let original = frames.flatMap { $0 }
        for faster in [true, false] {
            var output: [Int16] = []
            for frame in frames {
                let changed = try #require(faster ? TimeStretcher.accelerate(frame) : TimeStretcher.stretch(frame))
                let period = abs(changed.count - frame.count)
                #expect(abs(period - 300) <= 2, "changed by \(period) samples")
                output += changed
            }
            let pitch = ToneDetector.strongest(of: [130, 160, 200, 240], in: output)
            #expect(pitch == 160, "\(faster ? "shorter" : "longer"): strongest \(pitch)")
            let step = Self.largestStep(output)
            #expect(Double(step) <= 1.05 * Double(Self.largestStep(original)), "a seam of \(step)")
        }
    }

    /// In stereo both channels lose or gain the same period, found in them together, and each
    /// keeps its own sound.
    @Test func bothChannelsOfStereoChangeAlike() throws {
        let voice = Self.voice(frames: 1)[0]
        let quieter = voice.map { $0 / 2 }
        let stereo = zip(voice, quieter).flatMap { [$0, $1] }
        for faster in [true, false] {
            let changed = try #require(faster ? TimeStretcher.accelerate(stereo, channels: 2) : TimeStretcher.stretch(stereo, channels: 2))
            let left = stride(from: 0, to: changed.count, by: 2).map { changed[$0] }
            let right = stride(from: 1, to: changed.count, by: 2).map { changed[$0] }
            let mono = try #require(faster ? TimeStretcher.accelerate(voice) : TimeStretcher.stretch(voice))
            #expect(left.count == mono.count && abs(left.count - voice.count) >= 120)
            #expect(zip(left, right).allSatisfy { abs(Int($0 / 2) - Int($1)) <= 1 }, "the right channel is still half the left")
        }
    }

    @Test func noiseAtSpeechLevelIsLeftAlone() {
        var random = SystemRandomNumberGenerator()
        let noise = (0..<960).map { _ in Int16.random(in: -6_000...6_000, using: &random) }
        #expect(TimeStretcher.accelerate(noise) == nil)
        #expect(TimeStretcher.stretch(noise) == nil)
    }

    @Test func aQuietFrameAlwaysChanges() throws {
        var random = SystemRandomNumberGenerator()
        let hiss = (0..<960).map { _ in Int16.random(in: -60...60, using: &random) }
        let shorter = try #require(TimeStretcher.accelerate(hiss))
        let longer = try #require(TimeStretcher.stretch(hiss))
        #expect(shorter.count == 480 && longer.count == 1_440)
        #expect(shorter.first == hiss.first && shorter.last == hiss.last && longer.first == hiss.first && longer.last == hiss.last)
    }

    @Test func aShortFrameIsLeftAlone() {
        let short = Self.voice(frames: 1)[0].prefix(900)
        #expect(TimeStretcher.accelerate(Array(short)) == nil)
        #expect(TimeStretcher.stretch(Array(short)) == nil)
    }
}
