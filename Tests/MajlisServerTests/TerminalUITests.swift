import Foundation
import MajlisAudio
import MajlisPacks
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import MajlisTransport
import Testing

/// `majlis join --tui` driven through tmux, as a person would use it.
@Suite(.serialized) struct TerminalUITests {
    /// A private tmux server for one test.
    struct Tmux {
        let socket = "majlis-test-\(UUID().uuidString.prefix(8))"

        /// Runs a tmux command and returns what it printed.
        @discardableResult
        func run(_ arguments: [String], capture: Bool = true) throws -> String {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: output) }
            try ChildProcess.run(["/usr/bin/tmux", "-L", socket] + arguments, output: capture ? output : nil)
            return capture ? ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "") : ""
        }

        func start(_ session: String, _ command: String) throws {
            try run(["new-session", "-d", "-s", session, "-x", "80", "-y", "24", command], capture: false)
        }

        func keys(_ session: String, _ keys: String...) throws { try run(["send-keys", "-t", session] + keys, capture: false) }
        func type(_ session: String, _ text: String) throws { try run(["send-keys", "-t", session, "-l", text], capture: false) }
        func screen(_ session: String) throws -> String { try run(["capture-pane", "-t", session, "-p"]) }
        func sessions() throws -> String { try run(["list-sessions", "-F", "#{session_name}"]) }

        /// Waits until the screen of `session` shows `text`; returns the screen.
        @discardableResult
        func wait(_ session: String, for text: String, timeout: Double = 30) async throws -> String {
            let deadline = Date().addingTimeInterval(timeout)
            var last = ""
            // Looked at once more after the deadline: a task starved past it still sees the screen.
            while true {
                last = try screen(session)
                if last.contains(text) { return last }
                if Date() > deadline { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw TestClient.Timeout(description: "\(session) never showed \"\(text)\"; screen:\n\(last)")
        }

        /// Waits until the program in `session` has ended (its tmux session is gone).
        func waitGone(_ session: String, timeout: Double = 30) async throws -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                guard (try? sessions())?.split(separator: "\n").contains(Substring(session)) == true else { return true }
                if Date() > deadline { return false }
                try await Task.sleep(for: .milliseconds(50))
            }
        }

        func stop() { _ = try? run(["kill-server"], capture: false) }
    }

    static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") }

    @Test(.enabled(if: available, "tmux is installed by scripts/test")) func seedFlowInThreeTerminals() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let tmux = Tmux()
        defer { tmux.stop() }
        func command(_ user: String, _ extra: String = "") -> String {
            let token = server.token(user, grants: Grants(create: true), name: user.capitalized)
            return "LANG=en_US.UTF-8 \(MajlisProcess.executable.path) join --tui --url \(server.url) --token \(token) --room salon \(extra)"
        }
        try tmux.start("host", command("huda", "--create --mode request"))
        try await tmux.wait("host", for: "salon · 1 member · Ask to speak")
        try tmux.start("guest", command("omar"))
        try tmux.start("listener", command("sara"))
        try await tmux.wait("host", for: "3 members")
        // Joins are noticed in the chat.
        try await tmux.wait("host", for: "· Omar joined")
        try await tmux.wait("host", for: "· Sara joined")

        // The guest asks to speak and sees it is waiting; the host sees the request and accepts it.
        try tmux.keys("guest", "r")
        try await tmux.wait("guest", for: "You asked to speak: waiting for the host")
        try await tmux.wait("host", for: "Omar wants to speak")
        try tmux.keys("host", "a")
        try await tmux.wait("guest", for: "1. You [mic]")
        try await tmux.wait("guest", for: "The host accepted: you are on seat 1")
        try await tmux.wait("listener", for: "1. Omar [mic]")

        // Chat in Arabic and with an emoji, typed as UTF-8, seen intact by everyone.
        try tmux.keys("guest", "c")
        try tmux.type("guest", "السلام عليكم 👋")
        try tmux.keys("guest", "Enter")
        try await tmux.wait("listener", for: "Omar: السلام عليكم 👋")
        try await tmux.wait("guest", for: "› Omar: السلام عليكم 👋")
        let stored = try await TestClient.signedIn(server, user: "auditor")
        try await stored.call("room.join", room: "salon")
        let history = try await stored.call("chat.history", room: "salon", ["limit": 5])
        #expect(history["messages"]?.arrayValue?.contains { $0["text"] == "السلام عليكم 👋" } == true)
        try await stored.call("room.leave", room: "salon")

        // A gift the backend sends to the guest's seat shows as a line.
        let manifest = PackArchives.manifest.replacingOccurrences(of: #""kind": "emoji""#, with: #""kind": "gift""#)
        let gifts = try PackArchives.zip(PackArchives.files(manifest))
        let admin = ServerAPITests.adminToken(server)
        #expect(try await PackTests.call(server, "POST", "/v1/packs", body: gifts, token: admin).status == 201)
        let gift: JSONValue = ["from": "shop", "index": 0, "pack": .string(ResourcePack.sha256(gifts)), "item": "heart", "count": 2, "key": "t1"]
        #expect(try await GiftTests.api(server, "POST", "/v1/rooms/salon/gifts", gift, token: admin).status == 200)
        try await tmux.wait("listener", for: "shop → Omar: heart ×2")

        // The member list marks the host.
        try tmux.keys("listener", "u")
        try await tmux.wait("listener", for: "  Huda (host)")
        try tmux.keys("listener", "u")

        // Mic off, then leave the seat.
        try tmux.keys("guest", "m")
        try await tmux.wait("host", for: "1. Omar [off]")
        try tmux.keys("guest", "l")
        try await tmux.wait("host", for: "1. Seat 1")

        // In an ask-to-speak room, taking a seat asks; the host declines, and the listener sees it.
        try tmux.keys("listener", "t")
        try await tmux.wait("listener", for: "You asked to speak: waiting for the host")
        try await tmux.wait("host", for: "Sara wants to speak")
        try tmux.keys("host", "x")
        try await tmux.wait("listener", for: "The host declined your request to speak")
        // Asked again, then withdrawn.
        try tmux.keys("listener", "r")
        try await tmux.wait("listener", for: "You asked to speak: waiting for the host")
        try tmux.keys("listener", "r")
        try await tmux.wait("listener", for: "You withdrew your request to speak")

        // The terminal is resized: the grid reflows.
        try tmux.run(["resize-window", "-t", "host", "-x", "60", "-y", "20"], capture: false)
        let narrow = try await tmux.wait("host", for: "3. Seat 3")
        #expect(narrow.split(separator: "\n").allSatisfy { $0.count <= 60 })

        // A bot asks to speak with a tone; once the host accepts, the screen shows who is speaking.
        let singer = try JoinBotTests.Bot(["--url", server.url, "--token", server.token("singer", grants: Grants(), name: "Singer"),
                                          "--room", "salon", "--request", "--mic", "tone:440", "--duration", "60"])
        try await tmux.wait("host", for: "Singer wants to speak")
        try tmux.keys("host", "a")
        try await tmux.wait("listener", for: "Singer [mic] *")
        // Asked to leave only then (as Ctrl-C would): a busy machine may take seconds to get here.
        singer.interrupt()
        #expect(await singer.finish().status == 0)

        // Quitting leaves the room and ends the program.
        try tmux.keys("guest", "q")
        try await tmux.wait("host", for: "2 members")
        try await tmux.wait("host", for: "· Omar left")
        #expect(try await tmux.waitGone("guest"))
    }

    @Test(.enabled(if: available, "tmux is installed by scripts/test")) func arabicScreenIsMirroredAndTranslated() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let tmux = Tmux()
        defer { tmux.stop() }
        let token = server.token("huda", grants: Grants(create: true), name: "هدى")
        try tmux.start("host", "LANG=ar_SA.UTF-8 \(MajlisProcess.executable.path) join --tui --url \(server.url) --token \(token) --room majlis --create --mode request")
        let screen = try await tmux.wait("host", for: "عضو واحد · اطلب التحدث")
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
        // Flush right: the header ends at the last column, seat 1 is the rightmost cell.
        #expect(lines[0].hasSuffix("majlis · عضو واحد · اطلب التحدث") && lines[0].hasPrefix("   "))
        let seats = try #require(lines.first { $0.contains("1. المقعد 1") })
        #expect(seats.hasSuffix("1. المقعد 1") && seats.range(of: "1. المقعد 1")!.lowerBound > seats.range(of: "2. المقعد 2")!.lowerBound)
        #expect(screen.contains("q خروج"))
        // Typed Arabic goes out as typed.
        try tmux.keys("host", "c")
        try tmux.type("host", "مرحبا بكم")
        try tmux.keys("host", "Enter")
        try await tmux.wait("host", for: "هدى: مرحبا بكم")
        // The sound keys answer in Arabic too: the next voice effect by its name, the seats
        // placed around, and music that was not given.
        try tmux.keys("host", "e")
        try await tmux.wait("host", for: "مؤثر الصوت: أعمق")
        try tmux.keys("host", "h")
        try await tmux.wait("host", for: "المقاعد من حولك (لسماعات الرأس)")
        try tmux.keys("host", "k")
        try await tmux.wait("host", for: "لا موسيقى")
    }

    @Test(.enabled(if: available, "tmux is installed by scripts/test")) func aClientThatCannotGoOnSaysWhyAndExitsNonZero() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let tmux = Tmux()
        defer { tmux.stop() }
        let status = FileManager.default.temporaryDirectory.appendingPathComponent("tui-status-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: status) }
        let forged = AccessToken.sign(AccessClaims(sub: "mallory", exp: Int64(Date().timeIntervalSince1970) + 600), key: TestServer.key, secret: "not-the-secret")
        try tmux.start("client", "LANG=en_US.UTF-8 \(MajlisProcess.executable.path) join --tui --url \(server.url) --token \(forged) --room salon; echo \"exit $?\" > \(status).part; mv \(status).part \(status); sleep 30")
        try await tmux.wait("client", for: "The server refused your sign-in (the token signature is wrong) · press q to quit")
        try tmux.keys("client", "q")
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: status) && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect((try? String(contentsOfFile: status, encoding: .utf8)) == "exit 1\n")
    }

    /// The terminal client on a sound server with null sinks (no sound card): a bot's 440 Hz tone
    /// comes out of its speaker (recorded from the sink's monitor), and a 660 Hz tone played into
    /// its microphone is heard by another bot.
    @Test(.enabled(if: available && PulseAudioServer.available, "tmux and pulseaudio are installed by scripts/test"))
    func theTerminalClientUsesTheMachinesSpeakerAndMicrophone() async throws {
        try await RealTimeGate.exclusively {
            let server = try TestServer()
            defer { server.destroy() }
            let sound = try PulseAudioServer()
            defer { sound.stop() }
            let tmux = Tmux()
            defer { tmux.stop() }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-sound-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let token = { (user: String) in server.token(user, grants: Grants(create: true), name: user.capitalized) }

            try tmux.start("layla", "\(sound.shellAssignments) LANG=en_US.UTF-8 \(MajlisProcess.executable.path) join --tui --url \(server.url) --token \(token("layla")) --room sound --create")
            try await tmux.wait("layla", for: "Sound: PulseAudio")
            try await tmux.wait("layla", for: "sound · 1 member")
            try tmux.keys("layla", "t")
            try await tmux.wait("layla", for: "1. You (host) [mic]")

            // Speaker: what the client plays is the bot's tone, at about the level it was sent (-13.5 dBov).
            let singer = try JoinBotTests.Bot(["--url", server.url, "--token", token("singer"), "--room", "sound", "--seat", "2", "--mic", "tone:440", "--duration", "120"])
            try await tmux.wait("layla", for: "2. Singer [mic] *")
            let played = "\(directory)/speaker.wav"
            try await offPool { try sound.recordSpeaker(seconds: 3, to: played) }
            singer.interrupt()
            #expect(await singer.finish().status == 0)
            let heard = try WAVFile.read(played).int16
            #expect(heard.count > 48_000)
            #expect(ToneDetector.strongest(of: [220, 440, 660, 880, 1_000], in: heard) == 440)
            #expect(ToneDetector.power(of: 440, in: heard) > 100 * ToneDetector.power(of: 700, in: heard))
            // At its loudest second: a busy machine may leave gaps in what the client plays.
            let steady = Self.loudestSecond(of: heard)
            #expect(LevelMeter.dBov(steady) > -20 && LevelMeter.dBov(steady) < -8, "\(LevelMeter.dBov(steady)) dBov, \(LevelMeter.dBov(heard)) dBov over 3 s")

            // Microphone: a tone played into the machine's microphone reaches a listener through the client.
            var tone = ToneGenerator(frequency: 660, amplitude: 0.3)
            let tonePath = "\(directory)/tone660.wav"
            try WAVFile.write(PCMBuffer(sampleRate: AudioFormat.sampleRate, channels: 1, int16: (0..<200).flatMap { _ in tone.next() }), to: tonePath)
            let recorded = "\(directory)/ear.wav"
            let ear = try JoinBotTests.Bot(["--url", server.url, "--token", token("ear"), "--room", "sound", "--record", recorded, "--duration", "120"])
            try await tmux.wait("layla", for: "· Ear joined")
            try await offPool { try sound.playIntoMicrophone(tonePath) }  // 4 s of tone
            ear.interrupt()
            #expect(await ear.finish().status == 0)
            let samples = try WAVFile.read(recorded).int16
            let loudest = Self.loudestSecond(of: samples)
            print("a listener hears the machine's microphone at \(LevelMeter.dBov(loudest)) dBov at its loudest second")
            #expect(ToneDetector.strongest(of: [220, 440, 660, 880, 1_000], in: loudest) == 660)
            #expect(LevelMeter.dBov(loudest) > -20, "\(LevelMeter.dBov(loudest)) dBov")
        }
    }

    /// The loudest second of a 48 kHz recording, looked for in steps of 0.1 s.
    static func loudestSecond(of samples: [Int16]) -> [Int16] {
        stride(from: 0, to: max(1, samples.count - 48_000), by: 4_800).map { Array(samples[$0..<min(samples.count, $0 + 48_000)]) }
            .max { LevelMeter.dBov($0) < LevelMeter.dBov($1) } ?? []
    }
}
