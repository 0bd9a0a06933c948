import Foundation
import MajlisCommandLine
import MajlisLab
import MajlisTransport

/// `majlis bench mouth-to-ear`: a burst handed to the speaker's microphone, found at the
/// listener's speaker, one process and one clock, through a real server.
enum MouthToEarBenchmark {
    static let help = """
        usage: majlis bench mouth-to-ear [--bursts N] [--delay MS] [--jitter MS]
        Starts a server, a speaker and a listener (the SDK's VoiceRoom and LiveMediaEngine), and times N bursts
        (default 10) from the moment the microphone hands out the burst's first frame to the moment the
        listener's output plays it. Runs on clean loopback, then with every leg through the network simulator
        at MS +- jitter milliseconds (default 100 +- 30). Prints p50 and max of each.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        let bursts = try args.int("bursts", default: 10, range: 1...1000)
        let delay = try args.int("delay", default: 100, range: 0...5_000)
        let jitter = try args.int("jitter", default: 30, range: 0...5_000)
        try args.rejectPositional("bench mouth-to-ear")
        let conditions: [(String, NetworkSimulator.Settings?)] = [
            ("clean loopback", nil),
            ("\(delay) +- \(jitter) ms on each leg", NetworkSimulator.Settings(delay: Double(delay), jitter: Double(jitter))),
        ]
        for (name, impairment) in conditions {
            let delays = try runBlocking { try await MouthToEarTrial.run(impairment: impairment, bursts: bursts) }
            say(String(
                format: "mouth to ear, %@ (%d of %d bursts heard): p50 %.1f ms, max %.1f ms", name, delays.count, bursts,
                SignalingBenchmark.percentile(delays, 0.5), delays.max() ?? 0))
        }
        return 0
    }
}
