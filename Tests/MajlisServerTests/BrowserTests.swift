import Foundation
import MajlisAudio
import MajlisLab
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// The web app in headless Chromium against a real server: real WebRTC (ICE, DTLS-SRTP), real
/// pages clicked as a person would, audio measured from the remote track in the page.
@Suite(.serialized, .enabled(if: Browser.isAvailable, "needs chromium and chromium-driver (scripts/install-deps --test)"))
struct BrowserTests {
    static let web = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Web").path

    static func server() throws -> TestServer {
        try TestServer { config in
            config.webDirectory = web
            config.developmentKey = TestServer.key
        }
    }

    /// espeak-ng's speech as a 48 kHz WAV file, for a fake microphone.
    static func speechFile() async throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-browser-speech-\(UUID().uuidString).wav").path
        try await offPool { Result { try WAVFile.write(PCMBuffer(sampleRate: 48_000, channels: 1, int16: try SpeechSample.make()), to: path) } }.get()
        return path
    }

    /// Opens the app, joins `room` as `name` (creating it in `mode`), and waits for voice to connect.
    static func join(_ browser: Browser, server: TestServer, room: String, name: String, mode: String = "request", query: String = "") async throws {
        try await browser.open("http://127.0.0.1:\(server.server.port)/?room=\(room)\(query)")
        try await browser.wait(for: "the join form", "return document.querySelector('[data-form=join]') !== null")
        try await browser.run(
            """
            const form = document.querySelector('[data-form=join]');
            form.elements.name.value = arguments[0];
            form.elements.mode.value = arguments[1];
            form.requestSubmit();
            """, [.string(name), .string(mode)])
        try await browser.wait(for: "\(name) in the room", "return window.majlis.state.room !== null")
        try await browser.wait(for: "\(name)'s voice to connect", "return window.majlis.media()?.state === 'connected'")
    }

    /// The loudest level (RMS, 0...1) the page hears from `seat` over `seconds`.
    static func loudest(_ browser: Browser, seat: Int, seconds: Double) async throws -> Double {
        var loudest = 0.0
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            loudest = max(loudest, try await browser.run("return window.majlis.level(arguments[0])", [.int(Int64(seat))]).doubleValue ?? 0)
            try await Task.sleep(for: .milliseconds(50))
        }
        return loudest
    }

    @Test func aGuestAsksToSpeakIsAcceptedAndHeardThenHostMuted() async throws {
        let server = try Self.server()
        defer { server.destroy() }
        let speech = try await Self.speechFile()
        defer { try? FileManager.default.removeItem(atPath: speech) }
        let host = try await Browser(microphone: nil)
        let guest = try await Browser(microphone: speech)
        try await Browser.closing([host, guest]) { try await Self.hostAndGuest(server, host, guest) }
    }

    static func hostAndGuest(_ server: TestServer, _ host: Browser, _ guest: Browser) async throws {
        try await Self.join(host, server: server, room: "salon", name: "Huda")
        try await Self.join(guest, server: server, room: "salon", name: "Omar", query: "&processing=off")

        // The guest asks to speak; the host sees the request and accepts it.
        try await guest.run("document.querySelector('[data-action=take]').click()")
        try await host.wait(for: "the request at the host", "return document.querySelector('[data-action=accept]') !== null")
        try await host.run("document.querySelector('[data-action=accept]').click()")
        let seat = try await host.wait(for: "Omar seated", "const seat = window.majlis.state.seats.find((s) => s.user && s.user.startsWith('web-') && s.user !== window.majlis.state.me.id); return seat ? seat.index + 1 : null")
        let index = Int(seat.intValue ?? 1) - 1
        // The guest's speech is heard on the host's page, from the guest's seat track.
        let heard = try await Self.loudest(host, seat: index, seconds: 4)
        print("host hears the guest at RMS \(heard)")
        #expect(heard > 0.01)

        // Chat both ways.
        try await guest.run("const f = document.querySelector('[data-form=chat]'); f.elements.text.value = 'سلام from Omar'; f.requestSubmit()")
        try await host.wait(for: "the guest's message", "return [...document.querySelectorAll('.message bdi')].some((e) => e.textContent === 'سلام from Omar')")
        try await host.run("const f = document.querySelector('[data-form=chat]'); f.elements.text.value = '你好 Omar'; f.requestSubmit()")
        try await guest.wait(for: "the host's message", "return [...document.querySelectorAll('.message bdi')].some((e) => e.textContent === '你好 Omar')")

        // The host mutes the guest's seat: silence on the host's page.
        try await host.run("document.querySelector(`[data-seat='${arguments[0]}'] .avatar`).click()", [.int(Int64(index))])
        try await host.run("document.querySelector(`[data-seat='${arguments[0]}'] [data-action=mute]`).click()", [.int(Int64(index))])
        try await host.wait(for: "the seat muted", "return window.majlis.state.seats[arguments[0]]?.muted === true".replacingOccurrences(of: "arguments[0]", with: String(index)))
        try await host.wait(for: "silence from the muted seat", "return window.majlis.level(\(index)) < \(heard / 10)")
        let muted = try await Self.loudest(host, seat: index, seconds: 2)
        print("after the host mute: RMS \(muted)")
        #expect(muted < heard / 10)
    }
}
