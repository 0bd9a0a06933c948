import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import MajlisTransport
import Testing

/// `majlis join` as scripts run it, against a real server.
@Suite(.serialized) struct JoinBotTests {
    /// A running `majlis join`.
    final class Bot: @unchecked Sendable {
        let process = Process()
        let output = Pipe()
        let errors = Pipe()

        /// `closedInput`: standard input at end of file from the start (as `< /dev/null`).
        init(_ arguments: [String], closedInput: Bool = false) throws {
            process.executableURL = MajlisProcess.executable
            process.arguments = ["join"] + arguments
            process.standardOutput = output
            process.standardError = errors
            // Open: the bot runs until --duration or a signal.
            process.standardInput = closedInput ? FileHandle.nullDevice : Pipe()
            try process.run()
        }

        /// Standard output read by `read(until:)`; `finish()` returns it with the rest.
        private var printed = Data()

        /// Asks the bot to leave (SIGINT, as Ctrl-C would); `finish()` then collects it.
        func interrupt() { process.interrupt() }

        /// Reads standard output until it holds `text`; false when the bot closed it first.
        func read(until text: String) async -> Bool {
            await offPool { [self] in
                while !String(decoding: printed, as: UTF8.self).contains(text) {
                    let chunk = output.fileHandleForReading.availableData
                    if chunk.isEmpty { return false }
                    printed.append(chunk)
                }
                return true
            }
        }

        /// Waits for the exit; returns status, stdout and stderr.
        func finish() async -> (status: Int32, out: String, err: String) {
            await offPool { [self] in
                let out = printed + output.fileHandleForReading.readDataToEndOfFile()
                let err = errors.fileHandleForReading.readDataToEndOfFile()
                return (process.waitForExit(), String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
            }
        }
    }

    @Test func botJoinsTakesASeatSpeaksAndPrintsEvents() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let watcher = try await TestClient.signedIn(server, user: "watcher")
        try await watcher.call("room.create", room: "lobby")
        let bot = try Bot(["--url", server.url, "--token", server.token("bot"), "--room", "lobby", "--seat", "2", "--say", "hello from a bot", "--events", "--duration", "300"])
        try await watcher.event("member.joined") { $0["data"]?["member"]?["id"] == "bot" }
        // --seat counts from 1, as every screen does: seat 2 is index 1 on the wire.
        let seated = try await watcher.event("seat.updated") { $0["data"]?["seats"]?.arrayValue?.first?["user"] == "bot" }
        #expect(seated["data"]?["seats"]?.arrayValue?.first?["index"] == 1)
        let chat = try await watcher.event("chat.message")
        #expect(chat["data"]?["text"] == "hello from a bot")
        try await watcher.call("chat.send", room: "lobby", ["text": "hi bot", "clientMsgId": "w1"])
        // The bot stays until asked to leave once it has printed the reply: how long that takes
        // on a busy machine is no part of what is tested.
        #expect(await bot.read(until: "hi bot"))
        bot.interrupt()
        let result = await bot.finish()
        #expect(result.status == 0, "\(result.err)")
        try await watcher.event("member.left") { $0["data"]?["user"] == "bot" }
        // Every line of --events is one JSON event.
        let lines = result.out.split(separator: "\n")
        let events = try lines.map { try JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
        #expect(events.allSatisfy { $0["ev"]?.stringValue != nil && $0["room"] == "lobby" })
        #expect(events.contains { $0["ev"] == "chat.message" && $0["data"]?["text"] == "hi bot" })
    }

    /// `--emoji SEAT:ITEM`: the item found in the server's current emoji packs, sent to the seat
    /// (counted from 1); an item no pack has fails the run, saying so.
    @Test func botSendsASeatEmojiFromTheServersPacks() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let pack = try PackArchives.zip(PackArchives.files())
        #expect(try await PackTests.call(server, "POST", "/v1/packs", body: pack, token: ServerAPITests.adminToken(server)).status == 201)
        let watcher = try await TestClient.signedIn(server, user: "watcher")
        try await watcher.call("room.create", room: "lobby")
        let bot = try Bot(["--url", server.url, "--token", server.token("bot"), "--room", "lobby", "--emoji", "3:clap", "--duration", "300"])
        let emoji = try await watcher.event("seat.emoji")
        #expect(emoji["data"]?["index"] == 2 && emoji["data"]?["item"] == "clap" && emoji["data"]?["user"] == "bot", "\(emoji)")
        bot.interrupt()
        #expect(await bot.finish().status == 0)
        let unknown = try Bot(["--url", server.url, "--token", server.token("bot2"), "--room", "lobby", "--emoji", "1:dance", "--duration", "300"])
        let result = await unknown.finish()
        #expect(result.status == 1 && result.err.contains("no emoji dance"), "\(result.err)")
    }

    @Test func botAsksToSpeakAndWaitsForTheHost() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        try await host.call("room.create", room: "stage", ["mode": "request"])
        let bot = try Bot(["--url", server.url, "--token", server.token("speaker"), "--room", "stage", "--request", "--say", "thanks", "--duration", "2"])
        let request = try await host.event("request.received")
        try await host.call("request.accept", room: "stage", ["requestId": request["data"]!["request"]!["id"]!])
        let chat = try await host.event("chat.message")
        #expect(chat["data"]?["from"]?["id"] == "speaker")
        #expect(await bot.finish().status == 0)

        let rejected = try Bot(["--url", server.url, "--token", server.token("other"), "--room", "stage", "--request", "--duration", "5"])
        let second = try await host.event("request.received") { $0["data"]?["request"]?["user"] == "other" }
        try await host.call("request.reject", room: "stage", ["requestId": second["data"]!["request"]!["id"]!])
        let result = await rejected.finish()
        #expect(result.status == 1)
        #expect(result.err.contains("rejected"))
    }

    @Test func failuresExitNonZeroWithOneLine() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        try await host.call("room.create", room: "full")
        try await host.call("seat.take", room: "full", ["index": 0])
        let cases: [([String], String)] = [
            (["--url", server.url, "--token", server.token("x"), "--room", "missing", "--duration", "1"], "not found"),
            (["--url", server.url, "--token", server.token("x"), "--room", "full", "--seat", "1", "--duration", "1"], "seat 1 is taken"),
            (["--url", server.url, "--token", "not.a.token", "--room", "full", "--duration", "1"], "bad token"),
            (["--url", "ws://127.0.0.1:1/v1/signal", "--token", server.token("x"), "--room", "full", "--duration", "1"], "unreachable"),
            (["--url", server.url, "--room", "full"], "required"),
        ]
        let expired = AccessToken.sign(AccessClaims(sub: "late", exp: Int64(Date().timeIntervalSince1970) - 7200), key: TestServer.key, secret: server.secret)
        let closedInput: [([String], String)] = [
            // Standard input already at its end: the failure is still reported, not a silent exit 0.
            (["--url", server.url, "--token", "not.a.token", "--room", "full"], "bad token"),
            (["--url", server.url, "--token", expired, "--room", "full"], "UTC (2 h ago); mint a new one"),
        ]
        for (arguments, expected) in cases + closedInput {
            let result = await (try Bot(arguments, closedInput: !cases.contains { $0.0 == arguments })).finish()
            #expect(result.status == 1, "\(arguments)")
            #expect(result.err.contains(expected), "\(arguments): \(result.err)")
            #expect(result.err.split(separator: "\n").count == 1, "\(result.err)")
        }
    }

    @Test func kickedBotExitsNonZero() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        try await host.call("room.create", room: "k")
        let bot = try Bot(["--url", server.url, "--token", server.token("pest"), "--room", "k", "--duration", "30"])
        try await host.event("member.joined") { $0["data"]?["member"]?["id"] == "pest" }
        try await host.call("member.kick", room: "k", ["user": "pest"])
        let result = await bot.finish()
        #expect(result.status == 1)
        #expect(result.err.contains("kicked"))
    }

    @Test func botComesBackAfterTheServerRestarts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-bot-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try TestServer(dataDirectory: directory)
        let port = server.server.port
        let host = try await TestClient.signedIn(server, user: "host")
        try await host.call("room.create", room: "phoenix")
        let bot = try Bot(["--url", server.url, "--token", server.token("bot"), "--room", "phoenix", "--duration", "30"])
        try await host.event("member.joined") { $0["data"]?["member"]?["id"] == "bot" }
        server.stop()
        server = try TestServer(dataDirectory: directory, secret: server.secret) { $0.port = port }
        defer { server.destroy() }
        let watcher = try await TestClient.signedIn(server, user: "watcher")
        let snapshot = try await watcher.call("room.join", room: "phoenix")
        // The bot reconnects and joins again by itself (before the watcher, or after it).
        var rejoined = snapshot["members"]?.arrayValue?.contains(where: { $0["id"] == "bot" }) == true
        if !rejoined { rejoined = (try? await watcher.event("member.joined", timeout: 60) { $0["data"]?["member"]?["id"] == "bot" }) != nil }
        #expect(rejoined)
        #expect(bot.process.isAlive)
        bot.interrupt()
        _ = await bot.finish()
    }
}
