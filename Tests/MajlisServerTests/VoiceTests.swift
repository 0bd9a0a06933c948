import Foundation
import MajlisAudio
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Voice end to end: bots speak tones through the real server; a listener bot records the mix.
@Suite(.serialized) struct VoiceTests {
    func token(_ user: String) -> String { TestServer.token(user, grants: Grants(create: true)) }

    func recording(_ server: TestServer, speakers: [(user: String, tone: Int)], seconds: Int = 2) async throws -> [Int16] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-heard-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let watcher = try await TestClient.signedIn(server, user: "watcher")
        try await watcher.call("room.create", room: "voice")
        let listener = try JoinBotTests.Bot(["--url", server.url, "--token", token("listener"), "--room", "voice", "--record", path, "--duration", "\(seconds + 2)"])
        try await watcher.event("member.joined") { $0["data"]?["member"]?["id"] == "listener" }
        var bots: [JoinBotTests.Bot] = []
        for (index, speaker) in speakers.enumerated() {
            bots.append(try JoinBotTests.Bot(["--url", server.url, "--token", token(speaker.user), "--room", "voice", "--seat", "\(index)",
                                              "--mic", "tone:\(speaker.tone)", "--duration", "\(seconds)"]))
        }
        for bot in bots { #expect(bot.finish().status == 0) }
        let result = listener.finish()
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
}
