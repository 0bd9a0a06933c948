import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Majlis as docs/deploy.md puts it on a server: behind Debian's nginx terminating TLS with the
/// configuration in deploy/, a browser and a bot in one room through it, voice straight over UDP.
@Suite(
    .serialized,
    .enabled(if: Browser.isAvailable && FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "needs chromium and nginx (scripts/install-deps --test)"))
struct DeploymentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func aBrowserAndABotTalkThroughNginxTerminatingTLS() async throws {
        try await RealTimeGate.inPairs {
            let server = try TestServer { $0.developmentKey = TestServer.key }
            defer { server.destroy() }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-nginx-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder + "/logs", withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try ChildProcess.run(
                ["/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", folder + "/key.pem", "-out", folder + "/cert.pem",
                 "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], output: folder + "/openssl.out")

            // deploy/nginx-majlis.conf as an operator fills it in, inside a minimal nginx.conf.
            let port = try Browser.freePort()
            let site = try String(contentsOfFile: Self.root.appendingPathComponent("deploy/nginx-majlis.conf").path, encoding: .utf8)
                .replacingOccurrences(of: "listen 443 ssl;", with: "listen 127.0.0.1:\(port) ssl;")
                .replacingOccurrences(of: "voice.example.com", with: "127.0.0.1")
                .replacingOccurrences(of: "/etc/letsencrypt/live/127.0.0.1/fullchain.pem", with: folder + "/cert.pem")
                .replacingOccurrences(of: "/etc/letsencrypt/live/127.0.0.1/privkey.pem", with: folder + "/key.pem")
                .replacingOccurrences(of: "127.0.0.1:7880", with: "127.0.0.1:\(server.server.port)")
            let temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map { "\($0)_temp_path \(folder)/\($0);" }.joined(separator: " ")
            try """
                daemon off; master_process off; pid \(folder)/nginx.pid; error_log \(folder)/logs/error.log;
                events { worker_connections 512; }
                http { access_log off; \(temp)
                \(site)
                }
                """.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
            let nginx = Process()
            nginx.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
            nginx.arguments = ["-p", folder, "-c", folder + "/nginx.conf", "-e", folder + "/logs/error.log"]
            nginx.standardError = FileHandle.nullDevice
            try nginx.run()
            defer {
                // SIGKILL: a child of a test thread may have SIGTERM blocked (it inherits the mask).
                kill(nginx.processIdentifier, SIGKILL)
                nginx.waitForExit()
            }
            #expect(await eventually { (try? RawHTTP.exchange(port: port, "GET / HTTP/1.0\r\n\r\n", timeout: 2)) != nil }, "nginx did not start")

            let browser = try await Browser(microphone: nil, extraArguments: ["--ignore-certificate-errors"])
            try await Browser.closing([browser]) {
                try await browser.open("https://127.0.0.1:\(port)/?room=tls")
                try await browser.wait(for: "the join form", "return document.querySelector('[data-form=join]') !== null")
                try await browser.run("const f = document.querySelector('[data-form=join]'); f.elements.name.value = 'Huda'; f.requestSubmit()")
                try await browser.wait(for: "asked to create the room", "return document.querySelector('[data-form=create]') !== null")
                try await browser.run("const f = document.querySelector('[data-form=create]'); f.elements.mode.value = 'free'; f.requestSubmit()")
                try await browser.wait(for: "Huda in the room, voice connected", "return window.majlis.page.step === 'room' && window.majlis.media()?.state === 'connected'")
                #expect(try await browser.run("return window.majlis.signal().url") == .string("wss://127.0.0.1:\(port)/v1/signal"))
                // Health and metrics are not served to the world through the proxy.
                let hidden = try await browser.run("return Promise.all(['/metrics', '/healthz'].map((path) => fetch(path).then((answer) => answer.status)))")
                #expect(hidden == [404, 404], "\(hidden)")
                // A bot through the same proxy (wss, trusting the certificate nginx shows) speaks a tone on seat 2.
                let bot = try JoinBotTests.Bot(
                    ["--url", "wss://127.0.0.1:\(port)/v1/signal", "--trust-cert", folder + "/cert.pem", "--token", server.token("tone", grants: Grants(create: true)),
                     "--room", "tls", "--seat", "2", "--mic", "tone:440", "--duration", "30"])
                try await browser.wait(for: "the tone on seat 2", "return window.majlis.level(1) > 0.01")
                bot.interrupt()
                #expect(await bot.finish().status == 0)
            }
        }
    }
}
