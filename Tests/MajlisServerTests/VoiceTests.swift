import Foundation
import MajlisAudio
import MajlisLab
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Voice end to end: bots speak tones through the real server; a listener bot records the mix.
@Suite(.serialized) struct VoiceTests {
    func recording(_ server: TestServer, speakers: [(user: String, tone: Int)], seconds: Int = 2) async throws -> [Int16] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-heard-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let watcher = try await TestClient.signedIn(server, user: "watcher")
        try await watcher.call("room.create", room: "voice")
        // The listener records until every speaker has finished, however long the machine takes.
        let listener = try JoinBotTests.Bot(["--url", server.url, "--token", server.token("listener"), "--room", "voice", "--record", path])
        try await watcher.event("member.joined") { $0["data"]?["member"]?["id"] == "listener" }
        var bots: [JoinBotTests.Bot] = []
        for (index, speaker) in speakers.enumerated() {
            bots.append(try JoinBotTests.Bot(["--url", server.url, "--token", server.token(speaker.user), "--room", "voice", "--seat", "\(index + 1)",
                                              "--mic", "tone:\(speaker.tone)", "--duration", "\(seconds)"]))
        }
        for bot in bots { #expect(await bot.finish().status == 0) }
        listener.interrupt()
        let result = await listener.finish()
        #expect(result.status == 0, "\(result.err)")
        return try WAVFile.read(path).int16
    }

    @Test func aSeatedSpeakersToneReachesTheListener() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let heard = try await recording(server, speakers: [("speaker", 440)])
        // The loudest second of the recording is the tone, at about the level it was sent (-13.5 dBov).
        let loudest = stride(from: 0, to: max(1, heard.count - 48_000), by: 4_800).map { Array(heard[$0..<min(heard.count, $0 + 48_000)]) }
            .max { LevelMeter.dBov($0) < LevelMeter.dBov($1) } ?? []
        #expect(ToneDetector.strongest(of: [220, 440, 880, 1_000], in: loudest) == 440)
        #expect(LevelMeter.dBov(loudest) > -20)
        #expect(LevelMeter.dBov(loudest) < -10)
    }

    @Test func twoSpeakersAreBothInTheMix() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let heard = try await recording(server, speakers: [("low", 440), ("high", 1_000)])
        let loudest = stride(from: 0, to: max(1, heard.count - 48_000), by: 4_800).map { Array(heard[$0..<min(heard.count, $0 + 48_000)]) }
            .max { LevelMeter.dBov($0) < LevelMeter.dBov($1) } ?? []
        let low = ToneDetector.power(of: 440, in: loudest)
        let high = ToneDetector.power(of: 1_000, in: loudest)
        let elsewhere = ToneDetector.power(of: 700, in: loudest)
        #expect(low > 100 * elsewhere && high > 100 * elsewhere)
        #expect(max(low, high) / min(low, high) < 4)
    }

    /// Speech through the whole system (two `majlis join` processes and a server) scores close
    /// to plain Opus at the same bitrate on the same speech, side by side in one run (PESQ-WB
    /// from PyPI as the judge). On an idle machine the two score the same (3.94); the bound here
    /// is 0.8 of plain, as this runs beside the rest of the suite and a playout started at the
    /// jitter's depth follows a busy machine's stalls (3.34 with three busy loops on two cores).
    /// A reading under that is taken once more, in a room of its own.
    /// Within 0.05 of plain on a clean path is held on virtual time, where no machine stalls
    /// (`VirtualCallTests.aCleanCallIsPlainOpusWithoutAddedDepth`), and measured by
    /// `majlis bench quality`.
    @Test func speechQualityMatchesPlainOpus() async throws {
        try await RealTimeGate.exclusively {
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-pesq-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: work) }
            let original = try await offPool {
                try SpeechSample.make("The majlis is open tonight. Everyone is welcome to sit, listen, and take a seat to speak when the host invites them.")
            }
            let speech = "\(work)/speech.wav"
            try WAVFile.write(PCMBuffer(sampleRate: 48_000, channels: 1, int16: original), to: speech)
            // Plain Opus, 32 kb/s, 20 ms frames: the baseline.
            let plain = try await offPool { try PlainOpusBaseline.run(original, impairment: nil).pcm }

            // Through Majlis: a speaker bot, the server, a listener bot's recording. A machine
            // busy enough to stall the bots' clocks deepens the listener's playout mid-sentence:
            // a reading under the mark is taken once more (in a room of its own), as a person
            // would say it again.
            let server = try TestServer()
            defer { server.destroy() }
            let seconds = Int((Double(original.count) / 48_000).rounded(.up)) + 1
            let watcher = try await TestClient.signedIn(server, user: "watcher")
            var scores: [Double] = []
            for attempt in 0..<2 {
                let room = "voice\(attempt)"
                let heardPath = "\(work)/heard-\(attempt).wav"
                try await watcher.call("room.create", room: room)
                let listener = try JoinBotTests.Bot(["--url", server.url, "--token", server.token("listener"), "--room", room, "--record", heardPath])
                try await watcher.event("member.joined") { $0["data"]?["member"]?["id"] == "listener" && $0["room"] == .string(room) }
                let speaker = try JoinBotTests.Bot(["--url", server.url, "--token", server.token("reader"), "--room", room, "--seat", "1", "--mic", speech, "--duration", "\(seconds)"])
                let spoke = await speaker.finish()
                #expect(spoke.status == 0, "\(spoke.err)")
                listener.interrupt()
                let listened = await listener.finish()
                #expect(listened.status == 0, "\(listened.err)")
                let heard = try WAVFile.read(heardPath).int16
                scores = try await offPool { try PESQJudge.scores(reference: original, degraded: [plain, heard]) }
                if scores[1] >= 0.8 * scores[0] { break }
                print("PESQ-WB: plain Opus \(scores[0]), through Majlis \(scores[1]) (reading \(attempt + 1), under the mark)")
            }
            #expect(scores[0] > 3.0, "plain Opus scored \(scores[0])")
            #expect(scores[1] >= 0.8 * scores[0], "Majlis \(scores[1]) vs plain Opus \(scores[0])")
            print("PESQ-WB: plain Opus \(scores[0]), through Majlis \(scores[1])")
        }
    }
}
