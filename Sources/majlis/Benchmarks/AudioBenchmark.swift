import Foundation
import MajlisAudio
import MajlisLab
import MajlisProtocol

/// `majlis bench audio`: the audio toolbox against its goals, on espeak-ng speech and scenes
/// synthesized here (pink noise, a room's echo path, voiced tones).
enum AudioBenchmark {
    static let help = """
        usage: majlis bench audio [--runs N] [--noise-suppression LEVEL]
        Measures, N times (default 3, each with other noise and another echo path), and prints each run and the
        median: noise suppression (PESQ-WB of speech in pink noise at 10 dB SNR, before and after; clean speech
        through it; at LEVEL, default the standard one), echo cancellation (ERLE after 5 s of far-end speech through a 150 ms room echo path, PESQ-WB
        of the near end during double talk), pitch shift (measured semitones at -12, -5, +4, +12) and the
        equalizer (the largest error of the measured band gains against three settings). Needs espeak-ng and
        the PESQ judge (scripts/install-deps --test). The yardstick: the time one run takes against how long
        PESQ takes to judge the unprocessed speech, on the same machine.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        let runs = try args.int("runs", default: 3, range: 1...50)
        let levelName = args.string("noise-suppression") ?? VoiceProcessing.standard.noiseSuppression.rawValue
        guard let level = VoiceProcessing.Level(rawValue: levelName), level != .off else {
            throw Arguments.Failure(description: "--noise-suppression is one of low, moderate, high, veryHigh")
        }
        try args.rejectPositional("bench audio")
        let speech = try SpeechSample.make()
        let other = try SpeechSample.make("Good evening. Can everyone hear me now? I am speaking from my seat, while the music plays.")
        var rows: [[Double]] = []
        for run in 0..<runs {
            let seed = UInt64(run + 1)
            let noise = try ToolboxTrial.noiseSuppression(speech: speech, level: level, seed: seed)
            let echo = try ToolboxTrial.echoCancellation(farEnd: speech, nearEnd: other, seed: seed)
            let pitches = try [-12.0, -5, 4, 12].map { ($0, try ToolboxTrial.pitchShift(semitones: $0)) }
            let pitchError = pitches.map { abs($0.1 - $0.0) }.max() ?? 0
            let settings: [[Double]] = [
                [12, 6, 0, -6, -12, -12, -6, 0, 6, 12], [-15, 15, -15, 15, -15, 15, -15, 15, -15, 15],
                [3, 3, 3, 3, 3, 3, 3, 3, 3, 3].map { $0 * Double(run % 5 + 1) },
            ]
            let equalizerError = try settings.map { gains in
                zip(try ToolboxTrial.equalizerBands(gains: gains), gains).map { abs($0 - $1) }.max() ?? 0
            }.max() ?? 0
            say(String(
                format: "run %d: noise PESQ %.2f -> %.2f (%+.2f), clean %.2f of %.2f (-%.2f) | echo ERLE %.1f dB, double talk PESQ %.2f (uncancelled %.2f) | pitch %@ (worst error %.2f st) | equalizer worst band error %.2f dB",
                run + 1, noise.noisy, noise.suppressed, noise.improvement, noise.clean, noise.reference, noise.cleanLoss,
                echo.erle, echo.doubleTalk, echo.doubleTalkUncancelled,
                pitches.map { String(format: "%+.0f->%+.2f", $0.0, $0.1) }.joined(separator: " "), pitchError, equalizerError))
            rows.append([noise.improvement, noise.cleanLoss, echo.erle, echo.doubleTalk, pitchError, equalizerError])
        }
        func median(_ column: Int) -> Double {
            let values = rows.map { $0[column] }.sorted()
            return values[values.count / 2]
        }
        say(String(
            format: "median of %d: noise suppression %+.2f PESQ (goal +0.40), clean loss %.2f (goal at most 0.10) | ERLE %.1f dB (goal 30) | double talk PESQ %.2f (goal 3.0) | pitch error %.2f st (goal 0.2) | equalizer error %.2f dB (goal 1)",
            runs, median(0), median(1), median(2), median(3), median(4), median(5)))
        return 0
    }
}
