import Foundation
import MajlisCommandLine
import MajlisKit
import MajlisProtocol
import MajlisTransport

/// `majlis probe`: the last-mile probe against a server, before joining.
enum ProbeCommand {
    static let help = """
        usage: majlis probe --url ws://HOST:PORT/v1/signal --token TOKEN [--up BPS] [--down BPS] [--json] [--trust-cert FILE.pem]
        Measures the network path to the server's media port as a client about to join would (docs/protocol.md
        section 15): uplink and downlink available bandwidth up to the rates given (bits per second with headers,
        default 500000 each, 64000 to 10000000), loss, jitter, the round trip, and a grade (excellent, good,
        poor, bad, down), in about seven seconds. --json prints one JSON object instead of lines.
        Exit status: 0 when measured (whatever the grade); 1 with a reason when it could not be.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments, switches: ["json"])
        if args.wantsHelp {
            say(help)
            return 0
        }
        guard let url = args.string("url"), let token = args.string("token") else {
            throw Arguments.Failure(description: "--url and --token are required (see majlis probe --help)")
        }
        let up = try args.int("up", default: 500_000, range: 64_000...10_000_000)
        let down = try args.int("down", default: 500_000, range: 64_000...10_000_000)
        let json = args.flag("json")
        var options = LiveSignalingClient.Options()
        options.trustedCertificate = args.string("trust-cert")
        try args.rejectPositional("probe")
        let signalingOptions = options
        let report = try runBlocking { () async throws -> ProbeReport in
            let signaling = LiveSignalingClient(url: url, token: token, options: signalingOptions)
            _ = try await signaling.connect()
            let report = try await NetworkProbe.run(signaling: signaling, up: up, down: down)
            await signaling.disconnect()
            return report
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            say(String(decoding: try encoder.encode(report), as: UTF8.self))
            return 0
        }
        func line(_ name: String, _ figures: ProbeFigures, expected: Int) -> String {
            String(
                format: "%@: %d kb/s%@, loss %.1f%%, jitter %.1f ms (%d packets)", name, figures.bandwidth / 1_000,
                figures.bandwidth >= expected ? " (all that was asked)" : " of \(expected / 1_000) asked", figures.loss * 100, figures.jitter, figures.received)
        }
        say(line("uplink", report.uplink, expected: ProbeSchedule.clamped(up)))
        say(line("downlink", report.downlink, expected: ProbeSchedule.clamped(down)))
        say(report.roundTrip.map { String(format: "round trip: %.0f ms", $0) } ?? "round trip: no answer")
        say("quality: \(report.quality.rawValue)")
        return 0
    }
}
