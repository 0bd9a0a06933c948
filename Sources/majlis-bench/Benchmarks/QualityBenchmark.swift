import Foundation
import MajlisAudio
import MajlisCommandLine
import MajlisKit
import MajlisLab
import MajlisTransport

/// `majlis bench quality`: speech through weak networks, scored with PESQ-WB beside plain Opus.
enum QualityBenchmark {
    static let help = """
        usage: majlis bench quality [--speech FILE.wav] [--only NAME] [--model ordered|independent|both] [--runs N] [--seed N]
                                   [--virtual] [--keep DIR]
        For each network condition (applied to every leg: the speaker's uplink and the listener's downlink),
        a seated speaker says the speech once (after the call has settled for 3 s; in the "cold" rows it joins a
        listener already in the call and speaks as soon as it is seated, its recording waiting for its path to bind) to a listener through the network simulator (`majlis netsim`'s) and a real server; the
        listener's recording is scored with PESQ-WB (the `pesq` package, scripts/install-deps --test), beside
        plain Opus 32 kb/s with concealment over the same two legs. Speech defaults to espeak-ng's reading of
        two sentences. Every impaired condition runs on two network models (--model; default both): "ordered",
        where jitter delays packets but keeps their order (a FIFO path: a late packet holds back those after it), and
        "independent", where each packet gets its own delay (base +- a uniform draw within the jitter), so packets
        overtake each other as on Wi-Fi retries, multipath and cellular schedulers. Each condition runs N times
        (default 3, with netsim seeds --seed, --seed + 1, ...; default 1) and the median counts: a single call's
        score swings with where its few unrepaired losses fall. A condition is met when the median reaches its
        goal and no run collapsed (below 2.5 where plain Opus is below 1.4). --virtual runs each call on virtual
        time instead (the client media cores and the server's router in this process, no sockets or clocks): the
        same conditions, a run in a fraction of a second, exactly repeated by its seed, so 30 or 100 runs find the
        rare call that goes wrong. --only runs the conditions whose name contains NAME. --keep writes the speech and
        each run's recording to DIR and prints the listener's and speaker's statistics (and, with --virtual, a
        trace of both every 100 ms in DIR/NAME-runN.trace) and what the simulator relayed and dropped.
        """

    struct Condition {
        var name: String
        var settings: NetworkSimulator.Settings?
        /// The PESQ-WB goal: an absolute score, or (when `relative`) how far below plain Opus.
        let goal: Double
        let relative: Bool
        /// The most mouth to ear may be, milliseconds (median of the runs), when the issue sets one.
        var mouthToEar: Double? = nil
        /// How long the call settles before the speech (0: the speaker speaks as soon as seated,
        /// before the listener has heard anything of the path), seconds.
        var warmUp: Double = 3
    }

    static func conditions(seed: UInt64) -> [Condition] {
        [
            Condition(name: "clean", settings: nil, goal: 0.05, relative: true),
            // Light loss, as on most mobile networks most of the time: no worse than heavy.
            Condition(name: "2% random, 20+-5 ms", settings: .init(loss: 0.02, delay: 20, jitter: 5, seed: seed), goal: 3.6, relative: false),
            Condition(name: "10% random, 40+-20 ms", settings: .init(loss: 0.10, delay: 40, jitter: 20, seed: seed), goal: 3.4, relative: false),
            Condition(name: "20% random, 40+-20 ms", settings: .init(loss: 0.20, delay: 40, jitter: 20, seed: seed), goal: 3.2, relative: false),
            Condition(name: "30% random, 40+-20 ms", settings: .init(loss: 0.30, delay: 40, jitter: 20, seed: seed), goal: 3.2, relative: false),
            Condition(name: "40% random, 40+-20 ms", settings: .init(loss: 0.40, delay: 40, jitter: 20, seed: seed), goal: 2.8, relative: false),
            Condition(name: "10% bursty (3), 100+-30 ms", settings: .init(loss: 0.10, meanBurst: 3, delay: 100, jitter: 30, seed: seed), goal: 3.2, relative: false),
            Condition(
                name: "10% bursty (3), 100+-30 ms, cold", settings: .init(loss: 0.10, meanBurst: 3, delay: 100, jitter: 30, seed: seed), goal: 3.0, relative: false,
                warmUp: 0),
            Condition(name: "20% random, 300+-50 ms", settings: .init(loss: 0.20, delay: 300, jitter: 50, seed: seed), goal: 3.0, relative: false, mouthToEar: 900),
            Condition(
                name: "40 kb/s, 300 ms queue, 2%, 20+-5 ms", settings: .init(loss: 0.02, delay: 20, jitter: 5, seed: seed, rate: 40_000, queue: 300),
                goal: 3.0, relative: false, mouthToEar: 400),
        ]
    }

    /// The conditions on the chosen network models: the clean row once, every impaired one on
    /// each model, named after it.
    static func rows(_ conditions: [Condition], model: String) -> [Condition] {
        var rows: [Condition] = []
        for condition in conditions {
            guard let settings = condition.settings else {
                rows.append(condition)
                continue
            }
            for (name, reorder) in [("ordered", false), ("independent", true)] where model == "both" || model == name {
                var row = condition
                row.name = "\(condition.name), \(name == "ordered" ? "in order" : "independent")"
                row.settings = settings
                row.settings?.reorder = reorder
                rows.append(row)
            }
        }
        return rows
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments, switches: ["virtual"])
        if args.wantsHelp {
            say(help)
            return 0
        }
        let speechPath = args.string("speech")
        let only = args.string("only")
        let seed = UInt64(try args.int("seed", default: 1, range: 0...Int(Int32.max)))
        let runs = try args.int("runs", default: 3, range: 1...100)
        let keep = args.string("keep")
        let virtual = args.flag("virtual")
        let model = args.string("model") ?? "both"
        guard ["ordered", "independent", "both"].contains(model) else {
            throw Arguments.Failure(description: "--model must be ordered, independent or both")
        }
        try args.rejectPositional("bench quality")
        let speech = try speechPath.map { try Resampler.toTransportFormat(WAVFile.read($0)).int16 } ?? SpeechSample.make()
        if let keep { try WAVFile.write(PCMBuffer(sampleRate: 48_000, channels: 1, int16: speech), to: "\(keep)/speech.wav") }
        say(String(format: "speech: %.1f s; PESQ-WB, median of %d runs; every condition on both legs", Double(speech.count) / 48_000, runs))
        say("condition                                         | loss e2e | plain Opus | Majlis (each run)  | goal            | mouth to ear (goal) | met | RED fills, resent")
        var allMet = true
        for template in rows(conditions(seed: seed), model: model) where only.map({ template.name.contains($0) }) ?? true {
            var plainScores: [Double] = []
            var scores: [Double] = []
            var losses: [Double] = []
            var delays: [Double] = []
            var fills = 0
            var resent = 0
            var plains: [[Int16]] = []
            var heard: [[Int16]] = []
            var calls: [(listener: LiveMediaEngine.Statistics, speaker: LiveMediaEngine.Statistics, trace: [VirtualCall.Sample])] = []
            for run in 0..<runs {
                var settings = template.settings
                settings?.seed = seed &+ UInt64(run)
                let impairment = settings
                if virtual {
                    let call = try VirtualCall.run(speech, impairment: impairment, warmUp: template.warmUp)
                    heard.append(call.heardSpeech(length: speech.count))
                    calls.append((call.listener, call.speaker, call.trace))
                    losses.append(call.networkLoss)
                    delays.append(call.mouthToEar ?? .infinity)
                    if keep != nil { say("  run \(run) network: up \(call.relayed.up), down \(call.relayed.down)") }
                } else {
                    let trial = try runBlocking { try await SpeechTrial.run(speech, impairment: impairment, warmUp: template.warmUp) }
                    heard.append(trial.heard)
                    calls.append((trial.listener, trial.speaker, []))
                    losses.append(trial.networkLoss ?? 0)
                    delays.append(trial.mouthToEar ?? .infinity)
                    if keep != nil, let relayed = trial.relayed { say("  run \(run) network: up \(relayed.up), down \(relayed.down)") }
                }
                plains.append(try PlainOpusBaseline.run(speech, impairment: settings, seed: seed &+ UInt64(run)).pcm)
                fills += calls[run].listener.recoveredByRedundancy
                resent += calls[run].speaker.retransmitted + calls[run].listener.repairedByRetransmission
            }
            let judged = try PESQJudge.scores(reference: speech, degraded: plains + heard)
            plainScores = Array(judged[..<runs])
            scores = Array(judged[runs...])
            if let keep {
                let name = template.name.filter { $0.isLetter || $0.isNumber }
                for (run, call) in calls.enumerated() {
                    try WAVFile.write(PCMBuffer(sampleRate: 48_000, channels: 1, int16: heard[run]), to: "\(keep)/\(name)-run\(run).wav")
                    say(String(
                        format: "  run %d (seed %d): PESQ-WB %.3f, mouth to ear %.0f ms; listener %@; speaker %@", run, Int(seed) + run, scores[run], delays[run],
                        "\(call.listener)", "\(call.speaker)"))
                    if !call.trace.isEmpty { try traceText(call.trace).write(toFile: "\(keep)/\(name)-run\(run).trace", atomically: true, encoding: .utf8) }
                }
            }
            let plain = median(plainScores)
            let score = median(scores)
            let goal = template.relative ? plain - template.goal : template.goal
            let delay = median(delays)
            // No call collapses: where plain Opus falls below 1.4, no run below 2.5.
            let collapsed = zip(plainScores, scores).count { $0 < 1.4 && $1 < 2.5 }
            let met = score >= goal && delay <= (template.mouthToEar ?? .infinity) && collapsed == 0
            allMet = allMet && met
            let goalText = template.relative ? String(format: ">= plain - %.2f", template.goal) : String(format: ">= %.1f", template.goal)
            let delayText = (delay.isFinite ? "\(Int(delay.rounded())) ms" : "not heard") + (template.mouthToEar.map { " (<= \(Int($0)))" } ?? "")
            let each = scores.map { String(format: "%.2f", $0) }.joined(separator: " ")
            say(String(
                format: "%@ | %7.1f%% | %10.3f | %6.3f (%@) | %@ | %@ | %@ | %d, %d",
                template.name.padding(toLength: 49, withPad: " ", startingAt: 0), median(losses) * 100, plain, score,
                each, goalText.padding(toLength: 15, withPad: " ", startingAt: 0), delayText.padding(toLength: 19, withPad: " ", startingAt: 0),
                met ? "yes" : collapsed > 0 ? "NO (\(collapsed) collapsed)" : "NO ", fills / runs, resent / runs))
        }
        return allMet ? 0 : 1
    }

    /// A call's trace as a table: both ends' statistics every 100 ms.
    static func traceText(_ trace: [VirtualCall.Sample]) -> String {
        var lines = ["time_ms target_ms played fec concealed late stretched accelerated nacks repaired red_fills | sent resent bitrate redundancy fec frames capacity"]
        for sample in trace {
            let l = sample.listener
            let s = sample.speaker
            lines.append(
                "\(Int(sample.time)) \(Int(l.targetDelay)) \(l.played) \(l.recoveredByFEC) \(l.concealed) \(l.late) \(l.stretched) \(l.accelerated) \(l.nacksSent) \(l.repairedByRetransmission) \(l.recoveredByRedundancy) | "
                    + "\(s.sent) \(s.retransmitted) \(s.bitrate) \(s.redundancy) \(s.fec) \(s.framesPerPacket) \(s.uplinkCapacity.map(String.init) ?? "-")")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
