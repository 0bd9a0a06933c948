import Foundation
import MajlisPacks
import MajlisProtocol
@testable import MajlisServer
import MajlisTestSupport
import MajlisTransport
import Testing

/// The `majlis` executable as scripts use it.
@Suite(.serialized) struct CommandLineTests {
    struct Run {
        var status: Int32
        var output: String
        var error: String
        /// Ended by a signal (a crash), not by exiting.
        var crashed = false
    }

    /// Runs `majlis ARGUMENTS` (or another `executable`) to its end.
    func run(_ arguments: [String], environment: [String: String]? = nil, executable: URL = MajlisProcess.executable) throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        let ending = process.waitForEnding()
        return Run(
            status: ending.status, output: String(decoding: out, as: UTF8.self), error: String(decoding: err, as: UTF8.self), crashed: ending.bySignal)
    }

    /// `majlis ARGUMENTS` started and left running, its output thrown away.
    func started(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = MajlisProcess.executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test func adminDrivesTheServerAPI() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let guest = try await TestClient.signedIn(server, user: "guest")
        let base = ["--server", "http://127.0.0.1:\(server.server.port)", "--key", TestServer.key, "--secret", server.secret]
        let created = try run(["admin", "create", "salon", "--title", "Evening", "--seats", "4", "--mode", "request", "--owner", "huda"] + base)
        #expect(created.status == 0 && created.output == "created room salon (4 seats, request, owner huda)\n", "\(created)")
        try await guest.call("room.join", room: "salon")
        let rooms = try run(["admin", "rooms"] + base)
        #expect(rooms.output == "salon  1 in  request  owner huda  Evening\n", "\(rooms)")
        #expect(try run(["admin", "say", "salon", "أهلاً", "--as", "bot:Gifts"] + base).status == 0)
        #expect(try await guest.event("chat.message")["data"]?["from"]?["name"] == "Gifts")
        #expect(try run(["admin", "mute-all", "salon"] + base).output == "every seat of salon muted\n")
        let room = try run(["admin", "room", "salon"] + base)
        #expect(room.output.contains("seat 1: empty (muted)") && room.output.contains("members: Guest (guest)"), "\(room)")
        #expect(room.output.contains("owner huda (not in the room)"), "\(room)")
        #expect(try run(["admin", "kick", "salon", "guest", "--ban", "3600"] + base).status == 0)
        #expect(try await guest.closed() == CloseCode.kicked.rawValue)
        // What it says is what happened: a ban alone for one not in the room, no ban to lift.
        let absent = try run(["admin", "kick", "salon", "omar", "--ban", "600"] + base)
        #expect(absent.status == 0 && absent.output.hasPrefix("omar is not in salon; banned from it for 600 s (until "), "\(absent)")
        #expect(try run(["admin", "unban", "salon", "omar"] + base).output.hasPrefix("lifted the ban: omar may come back"))
        let notBanned = try run(["admin", "unban", "salon", "omar"] + base)
        #expect(notBanned.status == 1 && notBanned.error == "majlis admin: omar is not banned from salon\n", "\(notBanned)")
        let json = try run(["admin", "bans", "salon", "--json"] + base)
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(json.output.utf8))["bans"]?.arrayValue?.first?["user"] == "guest")
        // Failures: the server's error, exit 1; a bad invocation, exit 2 or 1 with usage.
        let missing = try run(["admin", "kick", "salon", "nobody"] + base)
        #expect(missing.status == 1 && missing.error == "majlis admin: not_in_room: nobody is not in room salon\n", "\(missing)")
        #expect(try run(["admin", "end"] + base).error.contains("usage: majlis admin end ROOM"))
        #expect(try run(["admin"]).status == 2)
        let forbidden = try run(["admin", "rooms", "--server", "http://127.0.0.1:\(server.server.port)", "--token", server.token("guest")])
        #expect(forbidden.status == 1 && forbidden.error.contains("forbidden"))
        #expect(try run(["admin", "end", "salon"] + base).output == "ended room salon\n")
        let omar = try await TestClient.signedIn(server, user: "omar")
        let revoked = try await offPool { try self.run(["admin", "revoke", "omar", "--reason", "lost phone"] + base) }
        #expect(revoked.status == 0 && revoked.output.hasPrefix("signed omar out everywhere (sessions ended on this node: 1)"), "\(revoked)")
        #expect(try await omar.event("session.ended")["data"]?["message"] == "lost phone")
        #expect(try await omar.closed() == CloseCode.unauthorized.rawValue)

        // Resource packs: added from a file, listed, refused with the reason, retired.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-packs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let archive = try PackArchives.zip(PackArchives.files())
        try Data(archive).write(to: URL(fileURLWithPath: directory + "/classic.zip"))
        try Data("not a zip".utf8).write(to: URL(fileURLWithPath: directory + "/bad.zip"))
        let added = try await offPool { try self.run(["admin", "packs", "add", directory + "/classic.zip"] + base) }
        #expect(added.status == 0 && added.output == "pack classic is current: \(ResourcePack.sha256(archive))\n", "\(added)")
        let packs = try await offPool { try self.run(["admin", "packs"] + base) }
        #expect(packs.output.contains("classic") && packs.output.contains("3 items"), "\(packs)")
        let bad = try await offPool { try self.run(["admin", "packs", "add", directory + "/bad.zip"] + base) }
        #expect(bad.status == 1 && bad.error.contains("the pack is refused: not a zip archive"), "\(bad)")
        #expect(try await offPool { try self.run(["admin", "packs", "retire", "classic"] + base) }.status == 0)
        #expect(try await offPool { try self.run(["admin", "packs"] + base) }.output == "no packs\n")

        // A room's gift leaderboard.
        let gifts = try PackArchives.zip(PackArchives.files(PackArchives.manifest.replacingOccurrences(of: #""kind": "emoji""#, with: #""kind": "gift""#)))
        try Data(gifts).write(to: URL(fileURLWithPath: directory + "/gifts.zip"))
        #expect(try await offPool { try self.run(["admin", "packs", "add", directory + "/gifts.zip"] + base) }.status == 0)
        let layla = try await TestClient.signedIn(server, user: "layla")
        try await layla.call("room.create", room: "court")
        let gift = #"{"from":"shop","to":"layla","pack":"\#(ResourcePack.sha256(gifts))","item":"heart","count":4,"key":"cli"}"#
        #expect(try await ServerAPITests.call(server, "POST", "/v1/rooms/court/gifts", gift).status == 200)
        let board = try await offPool { try self.run(["admin", "gifts", "court", "--limit", "5"] + base) }
        #expect(board.status == 0 && board.output == "gave      shop   4\nreceived  layla  4\n", "\(board)")
        #expect(try await offPool { try self.run(["admin", "gifts", "court", "--day", "2020-01-01"] + base) }.output == "no gifts in court\n")
        let badDay = try await offPool { try self.run(["admin", "gifts", "court", "--day", "someday"] + base) }
        #expect(badDay.status == 1 && badDay.error.contains("day must be a date"), "\(badDay)")
    }

    /// `majlis admin logs` asks a `majlis join` bot's user for its log: the bot, asked as it
    /// connects, sends the lines its run logged, without its token.
    @Test func adminLogsFetchesABotsLog() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let token = server.token("rami", grants: Grants(create: true))
        let bot = try started(["join", "--url", server.url, "--token", token, "--room", "lounge", "--create", "--duration", "120"])
        defer {
            bot.terminate()
            bot.waitUntilExit()
        }
        let base = ["--server", "http://127.0.0.1:\(server.server.port)", "--key", TestServer.key, "--secret", server.secret]
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-log-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let asked = try await offPool { try self.run(["admin", "logs", "rami", "--minutes", "5", "--wait", "60", "--out", out] + base) }
        #expect(asked.status == 0 && asked.error.contains("bytes written to \(out)"), "\(asked)")
        let log = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        #expect(log.contains("[majlis] connected to \(server.url) as rami"), "\(log)")
        #expect(!log.contains(token), "\(log)")
        let unknown = try await offPool { try self.run(["admin", "log", "l0"] + base) }
        #expect(unknown.status == 1 && unknown.error.contains("request_not_found"), "\(unknown)")

        // With --log-file, a run that was killed is said at the next start, and one that ended is not.
        let file = out + ".client"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let killed = try started(["join", "--url", server.url, "--token", token, "--room", "lounge", "--duration", "120", "--log-file", file])
        let deadline = Date().addingTimeInterval(30)
        while !((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").contains("connected to"), Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        let after = ["join", "--url", server.url, "--token", token, "--room", "lounge", "--duration", "0", "--log-file", file]
        let next = try await offPool { try self.run(after) }
        #expect(next.status == 0 && next.error.contains("the last run with --log-file \(file) did not end"), "\(next)")
        let clean = try await offPool { try self.run(after) }
        #expect(clean.status == 0 && !clean.error.contains("did not end"), "\(clean)")
    }

    @Test func tokenPrintsAVerifiableJWT() throws {
        let result = try run(["token", "--key", "k1", "--secret", "s3cret", "--user", "layla", "--name", "Layla", "--room", "r9", "--grants", "join,create", "--ttl", "600"])
        #expect(result.status == 0)
        let token = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let claims = try AccessToken.verify(token, keys: ["k1": "s3cret"], now: Int64(Date().timeIntervalSince1970))
        #expect(claims.sub == "layla" && claims.name == "Layla" && claims.room == "r9")
        #expect(claims.effectiveGrants == Grants(join: true, create: true, admin: false, publish: false, chat: false))
        #expect(claims.exp - Int64(Date().timeIntervalSince1970) <= 600)
        let defaults = try AccessToken.verify(
            try run(["token", "--key", "k1", "--secret", "s3cret", "--user", "u"]).output.trimmingCharacters(in: .whitespacesAndNewlines),
            keys: ["k1": "s3cret"], now: Int64(Date().timeIntervalSince1970))
        #expect(defaults.effectiveGrants == Grants(join: true, create: false, admin: false, publish: true, chat: true))
    }

    @Test func tokenFlagsFromTheEnvironment() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["MAJLIS_SECRET"] = "from-env"
        let result = try run(["token", "--key", "k", "--user", "u"], environment: environment)
        #expect(result.status == 0)
        #expect(throws: Never.self) {
            try AccessToken.verify(result.output.trimmingCharacters(in: .whitespacesAndNewlines), keys: ["k": "from-env"], now: 0)
        }
    }

    @Test func badInvocationsFailWithOneClearLine() throws {
        let cases: [([String], String)] = [
            (["token", "--key", "k", "--secret", "s"], "--user"),
            (["token", "--key", "k", "--secret", "s", "--user", "bad user"], "--user"),
            (["token", "--key", "k", "--secret", "s", "--user", "u", "--grants", "fly"], "unknown grant"),
            (["serve", "--listen", "nonsense"], "--listen"),
            (["serve", "--listen", "0.0.0.0:0"], "without --keys"),
            (["serve", "--bogus", "1"], "unknown flag --bogus"),
            (["serve", "--request-timeout", "5", "--reqeust"], "unknown flag --reqeust"),
            (["serve", "--request-timeout"], "--request-timeout needs a value"),
            (["serve", "--media-realtim", "--listen", "127.0.0.1:0"], "unknown flag --media-realtim"),
            (["join", "--url", "ws://127.0.0.1:1/v1/signal", "--token", "t", "--room", "r", "extra"], "unexpected argument 'extra'"),
            (["serve", "--log-level", "loud"], "--log-level"),
            (["serve", "--keys", "prod:REPLACE-WITH-A-LONG-RANDOM-SECRET"], "placeholder"),
            (["serve", "--media-advertise", "203.0.113.10:7882"], "documentation address"),
            (["serve", "--tls-cert", "/nonexistent.pem"], "--tls-key"),
            (["fly"], "unknown command"),
            (["join", "--tokn", "x", "--url", "ws://127.0.0.1:1/v1/signal", "--room", "r"], "unknown flag --tokn (did you mean --token?)"),
            ([], "usage: majlis <command>"),
            (["serve", "--web", "/nonexistent"], "no index.html"),
            (["join", "--url", "http://127.0.0.1:1/v1/signal", "--token", "t", "--room", "r"], "ws://HOST:PORT/v1/signal"),
            (["join", "--url", "ws://127.0.0.1:1", "--token", "t", "--room", "r"], "ws://127.0.0.1:1/v1/signal"),
            (["join", "--url", "ws://127.0.0.1:1/v1/signal", "--token", "t", "--room", "r", "--mode", "request"], "add --create"),
            (["join", "--url", "ws://127.0.0.1:1/v1/signal", "--token", "t", "--room", "r", "--mic", "tone:440"], "--seat N or --request"),
            (["join", "--url", "ws://127.0.0.1:1/v1/signal", "--token", "t", "--room", "r", "--record", "/nonexistent/heard.wav"], "cannot write in /nonexistent"),
            (["join", "--url", "ws://127.0.0.1:1/v1/signal", "--token", "t", "--room", "r", "--trust-cert", "/etc/hostname"], "--trust-cert is for wss://"),
            (["join", "--url", "wss://127.0.0.1:1/v1/signal", "--token", "t", "--room", "r", "--trust-cert", "/nonexistent.pem"], "cannot read it"),
            (["admin", "rooms", "--server", "http://127.0.0.1:1", "--token", "t", "--trust-cert", "/etc/hostname"], "--trust-cert is for https://"),
            (["admin", "rooms", "--server", "https://127.0.0.1:1", "--token", "t", "--trust-cert", "/etc/hostname"], "no PEM certificate could be read"),
            (["admin", "rooms", "--server", "http://127.0.0.1:1", "--token", "t"], "cannot reach http://127.0.0.1:1"),
        ]
        for (arguments, expected) in cases {
            let result = try run(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.error.contains(expected), "\(arguments): \(result.error)")
        }
    }

    /// A PostgreSQL address that cannot be reached, or is no PostgreSQL address, stops `serve`
    /// and `migrate` with one line naming what failed: no crash (a unit restarting on failure
    /// would loop on one).
    @Test func anUnreachableOrWrongPostgresAddressIsOneLineNotACrash() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-pg-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let port = try Browser.freePort()
        // A SQLite store for migrate to copy.
        try await MajlisProcess.start(arguments: ["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", data]).terminate()
        let cases: [([String], String)] = [
            (["serve", "--listen", "127.0.0.1:0", "--data", data, "--postgres", "postgres://u:p@127.0.0.1:\(port)/majlis"], "cannot connect to PostgreSQL"),
            (["serve", "--listen", "127.0.0.1:0", "--data", data, "--postgres", "mysql://x"], "not a PostgreSQL address"),
            (["migrate", "--data", data, "--postgres", "postgres://u:p@127.0.0.1:\(port)/majlis"], "cannot connect to PostgreSQL"),
            (["migrate", "--data", data, "--postgres", "mysql://x"], "not a PostgreSQL address"),
        ]
        for (arguments, expected) in cases {
            let result = try run(arguments)
            #expect(!result.crashed && result.status == 1, "\(arguments): \(result)")
            #expect(result.error.contains(expected) && !result.error.contains("crashed"), "\(arguments): \(result.error)")
        }
    }

    /// One server per data directory, and no copy of a store a server still writes: a second
    /// `serve` and a `migrate` on a served directory are refused, saying why; once the server has
    /// stopped, migrate goes on (to a PostgreSQL that is not there here, named without its password).
    @Test func oneServerPerDataDirectoryAndMigrateWaitsForItsStop() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-lock-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let port = try Browser.freePort()
        let target = "postgres://majlis:hunter2@127.0.0.1:\(port)/majlis"
        let server = try await MajlisProcess.start(arguments: ["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", data])
        let second = try run(["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", data])
        #expect(second.status == 1 && second.error.contains("another majlis serve uses \(data)"), "\(second)")
        let early = try run(["migrate", "--data", data, "--postgres", target])
        #expect(early.status == 1 && early.error.contains("majlis serve is running on \(data)"), "\(early)")
        #expect(server.terminate() == 0)
        let stopped = try run(["migrate", "--data", data, "--postgres", target])
        #expect(stopped.status == 1 && stopped.error.contains("cannot connect to PostgreSQL") && !stopped.error.contains("hunter2"), "\(stopped)")
        #expect(Store.withoutCredentials(target) == "postgres://majlis:***@127.0.0.1:\(port)/majlis")
    }

    /// docs/deploy.md's runtime packages are every Debian package whose library the binary links
    /// (and the Swift runtime's Foundation links, which `--static-swift-stdlib` puts inside it),
    /// as `readelf` and `dpkg -S` find them on this machine; the C library and C++ runtime are
    /// every system's.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/readelf") && FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg")))
    func theRuntimePackagesInTheDeployGuideAreWhatTheBinaryLinks() throws {
        func output(_ argv: [String]) throws -> String { try run(Array(argv.dropFirst()), executable: URL(fileURLWithPath: argv[0])).output }
        // name -> path, as the loader resolves them for the binary.
        var resolved: [String: String] = [:]
        for line in try output(["/usr/bin/ldd", MajlisProcess.executable.path]).split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count >= 3, parts[1] == "=>" { resolved[String(parts[0]).trimmingCharacters(in: .whitespaces)] = String(parts[2]) }
        }
        func needed(_ file: String) throws -> [String] {
            try output(["/usr/bin/readelf", "-d", file]).split(separator: "\n").compactMap { line in
                guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
                return String(line[line.index(after: open)..<close])
            }
        }
        var libraries = Set<String>()
        for name in try needed(MajlisProcess.executable.path) {
            guard let path = resolved[name] else { continue }
            if path.contains("/lib/swift/") {
                for inner in try needed(path) where !(resolved[inner]?.contains("/lib/swift/") ?? true) { libraries.insert(resolved[inner]!) }
            } else {
                libraries.insert(path)
            }
        }
        var packages = Set<String>()
        for library in libraries {
            let real = (try? FileManager.default.destinationOfSymbolicLink(atPath: library)).map { ($0.hasPrefix("/") ? $0 : (library as NSString).deletingLastPathComponent + "/" + $0) } ?? library
            // Debian's merged /usr: the loader may name /lib where the package put /usr/lib.
            for candidate in [real, library].flatMap({ $0.hasPrefix("/usr/") ? [$0] : [$0, "/usr" + $0] }) {
                let owner = try output(["/usr/bin/dpkg", "-S", candidate])
                if let package = owner.split(separator: "\n").first?.split(separator: ":").first {
                    packages.insert(String(package))
                    break
                }
            }
        }
        packages.subtract(["libc6", "libstdc++6", "libgcc-s1"])
        #expect(packages.count >= 15, "\(packages.sorted())")
        let guide = try String(contentsOf: Self.root.appendingPathComponent("docs/deploy.md"), encoding: .utf8)
        let line = try #require(guide.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " ").range(of: #"apt-get install [^`]+"#, options: .regularExpression))
        let listed = Set(guide.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " ")[line].split(separator: " ").map(String.init))
        #expect(packages.subtracting(listed).isEmpty, "docs/deploy.md section 1 lacks \(packages.subtracting(listed).sorted())")
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func aWrongPathIsToldApartFromADeadServer() throws {
        let server = try TestServer()
        defer { server.destroy() }
        let port = server.server.port
        let wrong = try run(["join", "--url", "ws://127.0.0.1:\(port)/v2/signal", "--token", server.token("u"), "--room", "r"])
        #expect(wrong.status == 1 && wrong.error.contains("answered but is not Majlis signaling") && wrong.error.contains("/v1/signal"), "\(wrong)")
        let dead = try run(["join", "--url", "ws://127.0.0.1:1/v1/signal", "--token", server.token("u"), "--room", "r"])
        #expect(dead.status == 1 && dead.error.contains("unreachable"), "\(dead)")
    }

    /// Settings from a file (below the command line and the environment), and a typo in it named.
    @Test func serveReadsAConfigurationFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/majlis.conf"
        try """
            # Majlis on this machine
            listen = 127.0.0.1:0
            media-listen = 127.0.0.1:0   # any free port
            data = "\(directory)/data"
            keys = prod:a-long-secret-0123456789
            history-days = 30
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let server = try await MajlisProcess.start(arguments: ["serve", "--config", file])
        #expect(!server.banner.contains("development mode"))
        #expect(server.terminate() == 0)
        #expect(FileManager.default.fileExists(atPath: directory + "/data/majlis.sqlite"))
        // The example in deploy/ names only real settings (its addresses and secret overridden
        // here); as it is, with only its ports changed, its placeholders are refused.
        let example = MajlisProcess.executable.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("deploy/majlis.conf").path
        let ports = ["--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", directory + "/deployed", "--media-realtime=false"]
        let documentation = try run(["serve", "--config", example] + ports)
        #expect(documentation.status == 1 && documentation.error.contains("documentation address"), "\(documentation)")
        let placeholder = try run(["serve", "--config", example, "--media-advertise", "127.0.0.1:9"] + ports)
        #expect(placeholder.status == 1 && placeholder.error.contains("placeholder"), "\(placeholder)")
        let deployed = try await MajlisProcess.start(arguments: ["serve", "--config", example, "--media-advertise", "127.0.0.1:9", "--keys", "prod:\(TestServer.newSecret())"] + ports)
        #expect(deployed.terminate() == 0)
        try "listen = 127.0.0.1:0\nlisen = 127.0.0.1:1\n".write(toFile: file, atomically: true, encoding: .utf8)
        let typo = try run(["serve", "--config", file])
        #expect(typo.status == 1 && typo.error.contains("unknown setting 'lisen' in \(file)"), "\(typo)")
    }

    /// `majlis backup` copies the store while the server runs; the copy, put in a data directory,
    /// is the same store.
    @Test func anOnlineBackupRestores() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-backup-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = ["--keys", "k:backup-secret-0123456789"]
        let server = try await MajlisProcess.start(arguments: ["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", directory + "/live"] + key)
        let http = server.url.replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/v1/signal", with: "")
        let admin = ["--server", http, "--key", "k", "--secret", "backup-secret-0123456789"]
        #expect(try run(["admin", "create", "kept", "--title", "Kept room"] + admin).status == 0)
        let backup = try run(["backup", "--data", directory + "/live", "--to", directory + "/copy.sqlite"])
        #expect(backup.status == 0 && backup.output.contains("schema"), "\(backup)")
        #expect(try run(["backup", "--data", directory + "/live", "--to", directory + "/copy.sqlite"]).error.contains("exists already"))
        #expect(server.terminate() == 0)
        try FileManager.default.createDirectory(atPath: directory + "/restored", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: directory + "/copy.sqlite", toPath: directory + "/restored/majlis.sqlite")
        let restored = try await MajlisProcess.start(arguments: ["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", directory + "/restored"] + key)
        defer { restored.terminate() }
        let again = restored.url.replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/v1/signal", with: "")
        let rooms = try run(["admin", "rooms", "--server", again, "--key", "k", "--secret", "backup-secret-0123456789"])
        #expect(rooms.output.contains("kept") && rooms.output.contains("Kept room"), "\(rooms)")
    }

    /// `majlis message` sends, lists, syncs, searches, makes groups and follows, one JSON object a line;
    /// a bad invocation fails with one clear line before connecting.
    @Test func messageSendsListsSyncsAndFollows() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let omar = try await TestClient.signedIn(server, user: "omar")
        let base = ["message", "--url", server.url, "--token", server.token("huda"), "--device", "cli"]
        let sent = try run(base + ["send", "--to", "omar", "--text", "مرحبا", "--client-id", "c1"])
        let answer = try JSONDecoder().decode(JSONValue.self, from: Data(sent.output.utf8))
        let conversation = try #require(answer["conversation"]?.stringValue, "\(sent)")
        #expect(sent.status == 0 && answer["seq"] == 1)
        #expect(try await omar.event("msg.new")["data"]?["text"] == "مرحبا")
        let card = try run(base + ["send", "--conversation", conversation, "--type", "invite", "--fallback", "Join my room", "--payload", #"{"room":"salon"}"#])
        #expect(card.status == 0, "\(card)")
        let synced = try run(base + ["sync", "--conversation", conversation]).output.split(separator: "\n")
        #expect(synced.count == 2 && synced[1].contains(#""fallback":"Join my room""#), "\(synced)")
        let listed = try run(base + ["list"]).output.split(separator: "\n")
        #expect(listed.count == 1 && listed[0].contains(#""peer":"omar""#), "\(listed)")
        let found = try run(base + ["search", "--query", "room"]).output.split(separator: "\n")
        #expect(found.count == 1 && found[0].contains(#""seq":2"#), "\(found)")
        let group = try run(base + ["create", "--title", "Trip", "--members", "omar"])
        #expect(group.status == 0 && group.output.contains(#""memberCount":2"#), "\(group)")
        let club = try run(base + ["create", "--title", "Walkers", "--access", "open", "--about", "Weekend walks"])
        #expect(club.output.contains(#""access":"open""#), "\(club)")
        let discovered = try run(base + ["discover", "--query", "walks"]).output.split(separator: "\n")
        #expect(discovered.count == 1 && discovered[0].contains(#""title":"Walkers""#), "\(discovered)")

        // Following: what comes is printed as it comes.
        let follower = Process()
        follower.executableURL = MajlisProcess.executable
        follower.arguments = ["message", "--url", server.url, "--token", server.token("huda"), "--device", "watch", "follow", "--duration", "60"]
        let output = Pipe()
        follower.standardOutput = output
        try follower.run()
        defer { follower.terminate() }
        var printed = ""
        func readUntil(_ text: String) {
            while !printed.contains(text) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { return }
                printed += String(decoding: chunk, as: UTF8.self)
            }
        }
        readUntil(#"{"following":true}"#)
        _ = try await omar.request("msg.send", ["conversation": .string(conversation), "text": "أهلا", "clientMsgId": "o1"])
        readUntil("أهلا")
        #expect(printed.contains(#""ev":"msg.new""#) && printed.contains("أهلا"), "\(printed)")

        // Omar wrote back: a contact, online; Zaid is none. Then Huda hides.
        let presence = try run(base + ["presence", "--users", "omar,zaid"]).output.split(separator: "\n")
        #expect(presence.count == 1 && presence[0].contains(#""online":true"#), "\(presence)")
        let hidden = try run(base + ["presence", "--share", "nobody"])
        #expect(hidden.status == 0 && hidden.output.contains(#""share":"nobody""#), "\(hidden)")

        let bad = try run(base + ["send", "--text", "hi"])
        #expect(bad.status != 0 && bad.error.contains("--to USER or --conversation ID"), "\(bad)")
        let refused = try run(base + ["send", "--to", "huda", "--text", "me"])
        #expect(refused.status != 0 && refused.error.contains("bad_request"), "\(refused)")
        #expect(try run(base + ["dance"]).error.contains("unknown command 'dance'"))
    }

    /// `majlis message send --file` uploads and sends a video; killed (SIGKILL) once its upload
    /// is made, at whatever point of the upload that falls, `resume` with the same `--state`
    /// finishes it: one message, byte-identical for the recipient's `download`.
    @Test func messageSendsAFileAndResumesAKilledSend() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-cli-media-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let video = randomBytes(12_000_000)
        try video.write(to: URL(fileURLWithPath: directory + "/clip.mp4"))
        try Data(video.prefix(5_000)).write(to: URL(fileURLWithPath: directory + "/thumb.jpg"))
        let huda = ["message", "--url", server.url, "--token", server.token("huda"), "--state", directory + "/huda.json"]
        let omar = ["message", "--url", server.url, "--token", server.token("omar")]

        let sending = Process()
        sending.executableURL = MajlisProcess.executable
        sending.arguments = huda + ["send", "--to", "omar", "--file", directory + "/clip.mp4", "--thumbnail", directory + "/thumb.jpg", "--duration", "12000"]
        sending.standardOutput = FileHandle.nullDevice
        try sending.run()
        // Killed once its upload is made (the state file names it): mid-upload, or later.
        #expect(await eventually {
            (try? String(contentsOfFile: directory + "/huda.json", encoding: .utf8))?.contains(#""upload":"#) == true || !sending.isAlive
        })
        kill(sending.processIdentifier, SIGKILL)
        _ = await offPool { sending.waitForExit() }
        let resumed = try await offPool { try self.run(huda + ["resume"]) }
        #expect(resumed.status == 0, "\(resumed)")
        // One message, whether the kill fell before or after it was sent.
        let listed = try await offPool { try self.run(omar + ["list"]) }
        let conversation = try #require(try JSONDecoder().decode(JSONValue.self, from: Data(listed.output.utf8))["id"]?.stringValue, "\(listed)")
        let synced = try await offPool { try self.run(omar + ["sync", "--conversation", conversation]) }.output.split(separator: "\n")
        #expect(synced.count == 1, "\(synced)")
        let message = try JSONDecoder().decode(JSONValue.self, from: Data(synced[0].utf8))
        #expect(message["type"] == "video" && message["fallback"] == "[Video]" && message["payload"]?["duration"] == 12000, "\(message)")
        #expect(message["payload"]?["mime"] == "video/mp4" && message["payload"]?["size"] == 12_000_000, "\(message)")
        let media = try #require(message["payload"]?["media"]?.stringValue)
        let downloaded = try await offPool { try self.run(omar + ["download", "--media", media, "--out", directory + "/got.mp4"]) }
        #expect(downloaded.status == 0, "\(downloaded)")
        #expect(FileManager.default.contents(atPath: directory + "/got.mp4") == video)
        let thumbnail = try #require(message["payload"]?["thumbnail"]?.stringValue)
        let part = try await offPool { try self.run(omar + ["download", "--media", thumbnail, "--range", "10-19", "--out", directory + "/part.jpg"]) }
        #expect(part.status == 0 && FileManager.default.contents(atPath: directory + "/part.jpg") == video.subdata(in: 10..<20), "\(part)")
        // Nothing is left to send, and a second resume sends nothing again.
        let again = try await offPool { try self.run(huda + ["resume"]) }
        #expect(again.status == 0 && again.output.isEmpty, "\(again)")
        let unknown = try await offPool { try self.run(huda + ["send", "--to", "omar", "--file", directory + "/clip.bin"]) }
        #expect(unknown.status != 0 && unknown.error.contains("--mime"), "\(unknown)")
        #expect(try await offPool { try self.run(omar + ["resume"]) }.error.contains("--state FILE is required"))
    }

    @Test func everyCommandAnswersDashH() throws {
        for command in [["serve"], ["token"], ["admin"], ["join"], ["message"], ["netsim"], ["bench"], ["bench", "media"], ["backup"], []] {
            let result = try run(command + ["-h"])
            #expect(result.status == 0 && result.output.hasPrefix("usage: majlis"), "\(command): \(result)")
        }
    }

    /// A SIGTERM sent the moment the server says it is ready stops it (it used to be ignored until
    /// the server's signal handling ran, and a server stopped that early served on for good).
    @Test func aSIGTERMRightAfterReadyStopsTheServer() async throws {
        for _ in 0..<5 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-term-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let server = try await MajlisProcess.start(arguments: ["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", directory])
            kill(server.process.processIdentifier, SIGTERM)
            let exited = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                server.process.waitForExit()
                exited.signal()
            }
            // A liveness bound, not a timing goal: a stop takes well under a second.
            let stopped = exited.wait(timeout: .now() + 60) == .success
            if !stopped { server.kill() }
            #expect(stopped && server.process.exitStatus == 0)
        }
    }

    @Test func portInUseExitsNonZeroSayingWhichFlagChoosesAnotherAndCreatesNothing() throws {
        let holder = try TestServer()
        defer { holder.destroy() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let signaling = try run(["serve", "--listen", "127.0.0.1:\(holder.server.port)", "--media-listen", "127.0.0.1:0", "--data", directory])
        #expect(signaling.status != 0)
        #expect(signaling.error.contains("cannot listen on 127.0.0.1:\(holder.server.port): in use"))
        #expect(signaling.error.contains("--listen HOST:PORT"))
        let media = try run(["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:\(holder.server.mediaPort)", "--data", directory])
        #expect(media.status != 0)
        #expect(media.error.contains("udp 127.0.0.1:\(holder.server.mediaPort): in use"))
        #expect(media.error.contains("--media-listen HOST:PORT"))
        // One line each, no library log lines, and no data directory left behind.
        #expect(signaling.error.split(separator: "\n").count == 1 && media.error.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test func devModePrintsCommandsThatWorkAsPastedAndKeepsItsSecretAcrossRestarts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-dev-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = ["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", directory]
        let process = try await MajlisProcess.start(arguments: arguments)
        #expect(process.banner.contains("development mode"))
        // The join lines name this binary by its full path and the room the browser line opens.
        let joins = process.banner.split(separator: "\n").filter { $0.contains(" join --tui ") }
        #expect(joins.count == 2)
        #expect(joins.allSatisfy { $0.contains("\(MajlisProcess.executable.resolvingSymlinksInPath().path) join --tui --url \(process.url) --token ") && $0.contains("--room majlis") })
        let secret = try #require(process.banner.split(separator: " ").drop { $0 != "secret" }.dropFirst().first.map { String($0.prefix { !$0.isNewline }) })
        let client = try await TestClient.connect(process.url)
        let token = AccessToken.sign(AccessClaims(sub: "dev", exp: Int64(Date().timeIntervalSince1970) + 600), key: "devkey", secret: secret)
        #expect(try await client.request("hello", ["token": .string(token)])["ok"] == true)
        #expect(process.terminate() == 0)
        #expect(try await client.closed() == 1001)

        // Restarted on the same data: the same secret, so the old token still works.
        let again = try await MajlisProcess.start(arguments: arguments)
        defer { again.terminate() }
        #expect(again.banner.contains("secret \(secret) "))
        let back = try await TestClient.connect(again.url)
        #expect(try await back.request("hello", ["token": .string(token)])["ok"] == true)
    }

    /// With TLS, the join commands a development server prints trust its certificate and work as
    /// pasted; without that trust a client refuses a certificate no authority vouches for. The
    /// admin command trusts a certificate given to it, and no other self-signed one.
    @Test func aTLSServerPrintsJoinCommandsThatTrustItsCertificate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let tls = try SelfSignedCertificate(in: directory, name: "server")
        let server = try await MajlisProcess.start(
            arguments: ["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", directory.appendingPathComponent("data").path,
                        "--tls-cert", tls.certificate, "--tls-key", tls.key])
        defer { server.terminate() }
        #expect(server.url.hasPrefix("wss://"))
        let line = try #require(server.banner.split(separator: "\n").first { $0.contains("host (Huda):") })
        let join = Array(line.split(separator: " ").map(String.init).drop { $0 != "join" }).filter { $0 != "--tui" }
        let trust = try #require(join.firstIndex(of: "--trust-cert"))
        #expect(URL(fileURLWithPath: join[trust + 1]).resolvingSymlinksInPath() == URL(fileURLWithPath: tls.certificate).resolvingSymlinksInPath())
        let joined = try run(join + ["--duration", "1"])
        #expect(joined.status == 0, "\(joined.error)")
        var untrusting = join
        untrusting.removeSubrange(trust...(trust + 1))
        let refused = try run(untrusting + ["--duration", "1"])
        #expect(refused.status == 1)
        #expect(refused.error.contains("the server's certificate is not trusted (self-signed certificate)"), "\(refused.error)")
        #expect(refused.error.contains("--trust-cert"))
        // The admin command trusts the certificate the same way, and only that one.
        let api = server.url.replacingOccurrences(of: "wss://", with: "https://").replacingOccurrences(of: "/v1/signal", with: "")
        let admin = ["--server", api, "--data", directory.appendingPathComponent("data").path]
        let created = try run(["admin", "create", "salon", "--title", "Evening"] + admin + ["--trust-cert", tls.certificate])
        #expect(created.output.hasPrefix("created room salon"), "\(created.error)")
        #expect(try run(["admin", "end", "salon"] + admin + ["--trust-cert", tls.certificate]).output == "ended room salon\n")
        // The client's uploads trust the certificate as its signaling does: its log reaches support.
        let token = join[try #require(join.firstIndex(of: "--token")) + 1]
        var claims = String(token.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while claims.count % 4 != 0 { claims += "=" }
        let decoded = try #require(Data(base64Encoded: claims))
        let user = try #require(try JSONDecoder().decode(JSONValue.self, from: decoded)["sub"]?.stringValue)
        let own = directory.appendingPathComponent("bot.log").path
        let bot = try started(join + ["--duration", "60", "--log-file", own])
        defer {
            bot.terminate()
            bot.waitUntilExit()
        }
        let log = directory.appendingPathComponent("client.log").path
        let fetched = try await offPool { try self.run(["admin", "logs", user, "--wait", "60", "--out", log] + admin + ["--trust-cert", tls.certificate]) }
        #expect(fetched.status == 0, "\(fetched)")
        #expect(((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("connected to wss://"), "\(fetched); the bot's own log: \((try? String(contentsOfFile: own, encoding: .utf8)) ?? "")")
        let untrusted = try run(["admin", "rooms"] + admin)
        #expect(untrusted.status == 1)
        #expect(untrusted.error.contains("self-signed certificate; a server's own certificate is trusted with --trust-cert FILE.pem"), "\(untrusted.error)")
        let other = try SelfSignedCertificate(in: directory, name: "other")
        let mistrusted = try run(["admin", "rooms"] + admin + ["--trust-cert", other.certificate])
        #expect(mistrusted.status == 1)
        #expect(mistrusted.error.contains("certificate not trusted"), "\(mistrusted.error)")
    }

    /// Out of file descriptors but a reserve, the server hangs up new connections at once instead
    /// of spinning on accept(), and serves again when they are gone.
    @Test func aConnectionFloodBeyondTheFileLimitNeitherSpinsNorStopsTheServer() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-flood-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MajlisProcess.start(
            arguments: ["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", directory, "--keys", "k:s",
                        "--max-connections-per-address", "100000", "--log-level", "error"],
            fileLimit: 200)
        defer { server.terminate() }
        let port = try #require(URL(string: server.url)?.port)
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<260 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            if connected == 0 { sockets.append(fd) } else { close(fd) }
        }
        // Whatever the kernel accepted has been taken in or hung up; the server is idle, not spinning.
        func cpuSeconds() -> Double {
            guard let stat = try? String(contentsOfFile: "/proc/\(server.process.processIdentifier)/stat", encoding: .utf8),
                let end = stat.lastIndex(of: ")") else { return 0 }
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            return ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
        try await Task.sleep(for: .seconds(1))
        let before = cpuSeconds()
        try await Task.sleep(for: .seconds(2))
        #expect(cpuSeconds() - before < 1, "the server used \(cpuSeconds() - before) s of CPU in 2 s with its descriptors exhausted")
        #expect(server.process.isAlive)
        // Once the flood is gone, clients are served again.
        sockets.forEach { close($0) }
        sockets = []
        let token = AccessToken.sign(AccessClaims(sub: "after", exp: Int64(Date().timeIntervalSince1970) + 600), key: "k", secret: "s")
        #expect(await eventually {
            guard let client = try? await TestClient.connect(server.url, timeout: 5) else { return false }
            return (try? await client.request("hello", ["token": .string(token)]))?["ok"] == true
        })
    }
}
