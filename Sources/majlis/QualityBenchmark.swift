import Foundation
import MajlisAudio
import MajlisLab
import MajlisTransport

/// `majlis bench quality`: speech through weak networks, scored with PESQ-WB beside plain Opus.
enum QualityBenchmark {
    static let help = """
        usage: majlis bench quality [--speech FILE.wav] [--only NAME] [--seed N]
        For each network condition (applied to every leg: the speaker's uplink and the listener's downlink),
        a seated speaker says the speech once to a listener through `majlis netsim` and a real server; the
        listener's recording is scored with PESQ-WB (the `pesq` package, scripts/install-deps --test), beside
        plain Opus 32 kb/s with concealment over the same two legs. Speech defaults to espeak-ng's reading of
        two sentences. --only runs the conditions whose name contains NAME.
        """

    struct Condition {
        let name: String
        let settings: NetworkSimulator.Settings?
        /// The PESQ-WB goal: an absolute score, or (when `relative`) a share of plain Opus.
        let goal: Double
        let relative: Bool
    }

    static func conditions(seed: UInt64) -> [Condition] {
        [
            Condition(name: "clean", settings: nil, goal: 0.95, relative: true),
            Condition(name: "10% random, 40+-20 ms", settings: .init(loss: 0.10, delay: 40, jitter: 20, seed: seed), goal: 3.3, relative: false),
            Condition(name: "20% random, 40+-20 ms", settings: .init(loss: 0.20, delay: 40, jitter: 20, seed: seed), goal: 3.0, relative: false),
            Condition(name: "30% random, 40+-20 ms", settings: .init(loss: 0.30, delay: 40, jitter: 20, seed: seed), goal: 2.6, relative: false),
            Condition(name: "10% bursty (3), 100+-30 ms", settings: .init(loss: 0.10, meanBurst: 3, delay: 100, jitter: 30, seed: seed), goal: 3.0, relative: false),
        ]
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        let speechPath = args.string("speech")
        let only = args.string("only")
        let seed = UInt64(try args.int("seed", default: 1, range: 0...Int(Int32.max)))
        try args.rejectUnknown()
        let speech = try speechPath.map { try Resampler.toTransportFormat(WAVFile.read($0)).int16 } ?? SpeechSample.make()
        say(String(format: "speech: %.1f s; PESQ-WB; every condition on both legs", Double(speech.count) / 48_000))
        say("condition                    | loss e2e | plain Opus | Majlis | goal         | met | RED fills / resent / FEC,RED,kb/s")
        var allMet = true
        for condition in conditions(seed: seed) where only.map({ condition.name.contains($0) }) ?? true {
            let trial = try MediaBenchmark.blocking { try await SpeechTrial.run(speech, impairment: condition.settings) }
            let plain = try PlainOpusBaseline.run(speech, impairment: condition.settings, seed: seed)
            let scores = try PESQJudge.scores(reference: speech, degraded: [plain.pcm, trial.heard])
            let goal = condition.relative ? condition.goal * scores[0] : condition.goal
            let met = scores[1] >= goal
            allMet = allMet && met
            let goalText = condition.relative ? String(format: ">= %.2f x plain", condition.goal) : String(format: ">= %.1f", condition.goal)
            say(String(
                format: "%@ | %7.1f%% | %10.3f | %6.3f | %@ | %@ | %d / %d / %@,%d,%d",
                condition.name.padding(toLength: 28, withPad: " ", startingAt: 0), (trial.networkLoss ?? 0) * 100, scores[0], scores[1],
                goalText.padding(toLength: 12, withPad: " ", startingAt: 0), met ? "yes" : "NO ", trial.listener.recoveredByRedundancy,
                trial.speaker.retransmitted + trial.listener.repairedByRetransmission, trial.speaker.fec ? "on" : "off", trial.speaker.redundancy,
                trial.speaker.bitrate / 1000))
            if ProcessInfo.processInfo.environment["MAJLIS_DEBUG"] != nil { say("\(trial.listener) \(trial.speaker)") }
        }
        return allMet ? 0 : 1
    }
}
