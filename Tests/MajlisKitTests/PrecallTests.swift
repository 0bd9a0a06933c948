import Foundation
import MajlisAudio
import MajlisKit
import MajlisLab
import MajlisProtocol
import MajlisTestSupport
import MajlisTransport
import Testing

/// The pre-call tests end to end (docs/protocol.md section 15): the SDK against a real server,
/// through the network simulator where the probe is judged.
@Suite(.serialized) struct PrecallTests {
    func connected(_ server: LabServer, _ user: String) async throws -> LiveSignalingClient {
        let signaling = LiveSignalingClient(url: server.url, token: server.token(user))
        _ = try await signaling.connect()
        return signaling
    }

    /// Speech into the echo test comes back after the delay asked for (the way there and back
    /// included; within 100 ms beside the listener's own playout buffer, which a busy machine
    /// deepens) and sounds as it went: within 30% of plain Opus's PESQ-WB (it crosses the server
    /// twice, through one client that is speaker and listener at once); PESQ-WB 3.5 on an idle
    /// machine is measured by `majlis bench audio`.
    @Test func theEchoTestPlaysTheVoiceBackAfterItsDelay() async throws {
        try await RealTimeGate.exclusively {
            let server = try LabServer()
            defer { server.stop() }
            let speech = try await offPool { try SpeechSample.make(SpeechSample.sentence) }
            let figures = try await EchoTrial.run(speech, delay: 2, server: server)
            let plain = try await offPool { try PlainOpusBaseline.run(speech, impairment: nil).pcm }
            let scores = try await offPool { try PESQJudge.scores(reference: speech, degraded: [plain, figures.heard]) }
            print(String(format: "echo test: heard back %.0f ms after it was spoken (asked 2000; playout buffer %.0f ms); PESQ-WB %.2f (plain Opus %.2f)",
                figures.lag, figures.playout, scores[1], scores[0]))
            #expect(figures.likeness > 0.2, "what came back is the speech (likeness \(figures.likeness))")
            #expect(figures.lag >= 1_980 && figures.lag - figures.playout <= 2_100, "heard back after \(figures.lag) ms, with a playout buffer of \(figures.playout) ms")
            #expect(scores[1] >= 0.7 * scores[0], "the echo \(scores[1]) vs plain Opus \(scores[0])")
        }
    }

    /// Against a 300 kb/s path with 5% loss and 50 ms each way: the probe finds the uplink's
    /// bandwidth (it asked for more) within 20%, the downlink's in full (it asked for less),
    /// the loss within 2 points each way, and the round trip.
    @Test func theProbeMeasuresThePath() async throws {
        try await RealTimeGate.exclusively {
            let server = try LabServer(impairment: NetworkSimulator.Settings(loss: 0.05, delay: 50, seed: 7, rate: 300_000))
            defer { server.stop() }
            let signaling = try await connected(server, "prober")
            let started = MonotonicClock.milliseconds()
            let report = try await NetworkProbe.run(signaling: signaling, up: 600_000, down: 200_000)
            let took = MonotonicClock.milliseconds() - started
            await signaling.disconnect()
            print(String(format: "probe in %.1f s: up %d b/s, %.1f%% lost, %.1f ms jitter; down %d b/s, %.1f%% lost; round trip %.0f ms; %@",
                took / 1_000, report.uplink.bandwidth, report.uplink.loss * 100, report.uplink.jitter, report.downlink.bandwidth,
                report.downlink.loss * 100, report.roundTrip ?? -1, report.quality.rawValue))
            #expect(abs(Double(report.uplink.bandwidth) - 300_000) <= 60_000)
            #expect(report.downlink.bandwidth == 200_000)
            #expect(abs(report.uplink.loss - 0.05) <= 0.02 && abs(report.downlink.loss - 0.05) <= 0.02)
            let roundTrip = try #require(report.roundTrip)
            #expect(roundTrip >= 100 && roundTrip <= 200)
            #expect(report.quality == .poor, "5% loss grades poor")
        }
    }

    /// Probe and echo test ask for sane values; a result without a probe is an error.
    @Test func badPrecallRequestsAreRefused() async throws {
        let server = try LabServer()
        defer { server.stop() }
        let signaling = try await connected(server, "bad")
        for (op, args) in [("echo.start", ["delay": JSONValue.int(500)]), ("probe.start", ["up": JSONValue.int(1_000)]), ("probe.result", [:])] {
            await #expect(throws: MajlisError.self, "\(op)") { _ = try await signaling.request(op, args) }
        }
        await signaling.disconnect()
    }
}
