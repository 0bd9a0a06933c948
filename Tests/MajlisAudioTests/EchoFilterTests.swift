import Foundation
@testable import MajlisAudio
import MajlisProtocol
import Testing

/// The echo canceller's adaptive filter on noise through a known echo path.
@Suite struct EchoFilterTests {
    /// White noise played, heard `delay` samples later at half its level, and a reflection 10 ms
    /// after that at a quarter.
    static func scene(seconds: Double, delay: Int, seed: UInt64) -> (played: [Double], heard: [Double]) {
        var random = SplitMix64(seed: seed)
        let count = Int(seconds * Double(AudioFormat.sampleRate))
        let played = (0..<count).map { _ in (random.unit() * 2 - 1) * 8_000 }
        var heard = [Double](repeating: 0, count: count)
        for index in delay..<count {
            heard[index] = 0.5 * played[index - delay] + (index - delay >= 480 ? 0.25 * played[index - delay - 480] : 0)
        }
        return (played, heard)
    }

    /// The echo's power over what the filter leaves of it, dB, over `range` of `blocks`.
    static func erle(_ heard: [Double], _ left: [Double], _ range: Range<Int>) -> Double {
        let echo = range.reduce(0.0) { $0 + heard[$1] * heard[$1] }
        let rest = range.reduce(0.0) { $0 + left[$1] * left[$1] }
        return 10 * log10(echo / max(rest, 1e-9))
    }

    /// Runs `filter` over `heard` with the reference `offset` samples behind `played` (the
    /// reference leads the echo by `delay - offset`), from `start` to `end`.
    static func run(_ filter: inout EchoFilter, played: [Double], heard: [Double], offset: Int, from start: Int, to end: Int) -> [Double] {
        var left = [Double](repeating: 0, count: heard.count)
        var index = start
        while index + EchoFilter.block <= end {
            let reference = (index..<index + EchoFilter.block).map { $0 - offset >= 0 ? played[$0 - offset] : 0 }
            let (output, _) = filter.process(reference: reference[...], microphone: heard[index..<index + EchoFilter.block])
            left.replaceSubrange(index..<index + EchoFilter.block, with: output)
            index += EchoFilter.block
        }
        return left
    }

    static let delay = 4_800
    static let learnt = 2 * AudioFormat.sampleRate

    /// A 100 ms filter after 2 s of the scene, its reference 40 ms ahead of the echo, and the
    /// ERLE it reached over the last 200 ms.
    static func learning(seconds: Double, seed: UInt64) -> (filter: EchoFilter, played: [Double], heard: [Double], converged: Double) {
        let (played, heard) = scene(seconds: seconds, delay: delay, seed: seed)
        var filter = EchoFilter(milliseconds: 100)
        let before = run(&filter, played: played, heard: heard, offset: delay - 1_920, from: 0, to: learnt)
        return (filter, played, heard, erle(heard, before, learnt - 9_600..<learnt))
    }

    @Test func aVoiceOverTheEchoIsNotLearntAsEcho() {
        var (filter, played, heard, converged) = Self.learning(seconds: 4, seed: 5)
        let (delay, learnt) = (Self.delay, Self.learnt)
        // Then a near end 6 dB louder than the echo, for 2 s, with the echo.
        var random = SplitMix64(seed: 6)
        let voice = (0..<heard.count).map { $0 >= learnt ? (random.unit() * 2 - 1) * 8_000 : 0 }
        let both = zip(heard, voice).map { $0 + $1 }
        let after = Self.run(&filter, played: played, heard: both, offset: delay - 1_920, from: learnt, to: heard.count)
        // What is left of the echo: the output less the near end, which passes.
        let left = zip(after, voice).map { $0 - $1 }
        let held = Self.erle(heard, left, heard.count - 9_600..<heard.count)
        #expect(held > converged - 6, "ERLE \(held) dB after 2 s of double talk, \(converged) dB before")
        #expect(held > 20, "ERLE \(held) dB after 2 s of double talk")
    }

    @Test func theFilterLearnsAnEchoPathAndKeepsItThroughARealignment() {
        // The reference 40 ms ahead of the echo at first: 2 s to learn.
        var (filter, played, heard, converged) = Self.learning(seconds: 3, seed: 4)
        let (delay, learnt) = (Self.delay, Self.learnt)
        #expect(converged > 30, "ERLE \(converged) dB after 2 s of noise")
        // Then 10 ms ahead: the reference moves 6 blocks later, and so does what was learnt.
        let offset = delay - 480
        let past = (0..<learnt).map { $0 - offset >= 0 ? played[$0 - offset] : 0 }
        filter.realign(by: 6, past: past)
        let after = Self.run(&filter, played: played, heard: heard, offset: offset, from: learnt, to: learnt + 4_800)
        let kept = Self.erle(heard, after, learnt..<learnt + 4_800)
        #expect(kept > converged - 3, "ERLE \(kept) dB in the 100 ms after the realignment, \(converged) dB before")
    }
}
