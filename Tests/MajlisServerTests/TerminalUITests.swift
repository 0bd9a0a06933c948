import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// `majlis join --tui` driven through tmux, as a person would use it.
@Suite(.serialized) struct TerminalUITests {
    /// A private tmux server for one test.
    struct Tmux {
        let socket = "majlis-test-\(UUID().uuidString.prefix(8))"

        /// Runs a tmux command and returns what it printed. Spawned directly (posix_spawn and
        /// waitpid): the tmux server it may start must not inherit a pipe we wait on.
        @discardableResult
        func run(_ arguments: [String], capture: Bool = true) throws -> String {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: output) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, capture ? output : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            // Children must not inherit this thread's blocked signals (tmux stops itself with SIGTERM).
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var none = sigset_t()
            var all = sigset_t()
            sigemptyset(&none)
            sigfillset(&all)
            posix_spawnattr_setsigmask(&attributes, &none)
            posix_spawnattr_setsigdefault(&attributes, &all)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
            let argv = ["/usr/bin/tmux", "-L", socket] + arguments
            var cArguments = argv.map { strdup($0) } + [nil]
            defer { cArguments.forEach { free($0) } }
            var pid: pid_t = 0
            let spawned = posix_spawn(&pid, "/usr/bin/tmux", &actions, &attributes, &cArguments, environ)
            guard spawned == 0 else { throw TestClient.Timeout(description: "cannot run tmux: \(spawned)") }
            var status: Int32 = 0
            waitpid(pid, &status, 0)
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
            while Date() < deadline {
                last = try screen(session)
                if last.contains(text) { return last }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw TestClient.Timeout(description: "\(session) never showed \"\(text)\"; screen:\n\(last)")
        }

        /// Waits until the program in `session` has ended (its tmux session is gone).
        func waitGone(_ session: String, timeout: Double = 30) async throws -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                guard (try? sessions())?.split(separator: "\n").contains(Substring(session)) == true else { return true }
                try await Task.sleep(for: .milliseconds(50))
            }
            return false
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
            let token = TestServer.token(user, grants: Grants(create: true), name: user.capitalized)
            return "LANG=en_US.UTF-8 \(MajlisProcess.executable.path) join --tui --url \(server.url) --token \(token) --room salon \(extra)"
        }
        try tmux.start("host", command("huda", "--create --mode request"))
        try await tmux.wait("host", for: "salon · 1 member · Ask to speak")
        try tmux.start("guest", command("omar"))
        try tmux.start("listener", command("sara"))
        try await tmux.wait("host", for: "3 members")

        // The guest asks to speak; the host sees the request and accepts it.
        try tmux.keys("guest", "r")
        try await tmux.wait("host", for: "Omar wants to speak")
        try tmux.keys("host", "a")
        try await tmux.wait("guest", for: "1. You [mic]")
        try await tmux.wait("listener", for: "1. Omar [mic]")

        // Chat, seen by everyone.
        try tmux.keys("guest", "c")
        try tmux.type("guest", "salam alaikum")
        try tmux.keys("guest", "Enter")
        try await tmux.wait("listener", for: "Omar: salam alaikum")
        try await tmux.wait("guest", for: "› Omar: salam alaikum")

        // Mic off, then leave the seat.
        try tmux.keys("guest", "m")
        try await tmux.wait("host", for: "1. Omar [off]")
        try tmux.keys("guest", "l")
        try await tmux.wait("host", for: "1. Seat 1")

        // The listener cannot take a seat in request mode: the reason shows on the status line.
        try tmux.keys("listener", "t")
        try await tmux.wait("listener", for: "approval_required")

        // The terminal is resized: the grid reflows.
        try tmux.run(["resize-window", "-t", "host", "-x", "60", "-y", "20"], capture: false)
        let narrow = try await tmux.wait("host", for: "3. Seat 3")
        #expect(narrow.split(separator: "\n").allSatisfy { $0.count <= 60 })

        // A bot asks to speak with a tone; once the host accepts, the screen shows who is speaking.
        let singer = try JoinBotTests.Bot(["--url", server.url, "--token", TestServer.token("singer", grants: Grants(), name: "Singer"),
                                          "--room", "salon", "--request", "--mic", "tone:440", "--duration", "3"])
        try await tmux.wait("host", for: "Singer wants to speak")
        try tmux.keys("host", "a")
        try await tmux.wait("listener", for: "Singer [mic] *")
        #expect(await singer.finish().status == 0)

        // Quitting leaves the room and ends the program.
        try tmux.keys("guest", "q")
        try await tmux.wait("host", for: "2 members")
        #expect(try await tmux.waitGone("guest"))
    }
}
