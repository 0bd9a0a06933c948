import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// The operator console (`/console`) in headless Chromium against a real server with members in
/// a room and a webhook receiver: what it shows, and that its buttons reach the members.
@Suite(.serialized, .enabled(if: Browser.isAvailable, "needs chromium and chromium-driver (scripts/install-deps --test)"))
struct ConsoleTests {
    @Test func anOperatorSeesRoomsAndRunsThem() async throws {
        let secret = TestServer.newSecret()
        let receiver = try WebhookReceiver(secret: secret)
        defer { receiver.stop() }
        let server = try TestServer(secret: secret) { config in
            config.webDirectory = BrowserTests.web
            config.developmentKey = TestServer.key
            config.webhooks.endpoints = [receiver.url]
        }
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "huda")
        try await host.call("room.create", room: "salon", ["title": "Evening salon", "seatCount": 4])
        let guest = try await TestClient.signedIn(server, user: "omar")
        try await guest.call("room.join", room: "salon")
        try await guest.call("seat.take", room: "salon", ["index": 1])
        let other = try await TestClient.signedIn(server, user: "layla")
        try await other.call("room.create", room: "diwan")

        let browser = try await Browser(microphone: nil)
        try await Browser.closing([browser]) {
            try await browser.open("http://127.0.0.1:\(server.server.port)/console")
            try await browser.wait(for: "the sign-in form", "return document.querySelector('[data-action=development]') !== null")
            try await browser.run("document.querySelector('[data-action=development]').click()")
            // Every room with its live member count.
            try await browser.wait(for: "both rooms", "return document.querySelectorAll('tr[data-room]').length === 2")
            #expect(try await browser.run("return document.querySelector('tr[data-room=salon] .members-count').textContent") == "2")
            // The host by name (its id on hover).
            let owner = try await browser.run("const name = document.querySelector('tr[data-room=salon] td[data-label] bdi[title=huda]'); return name?.textContent ?? null")
            #expect(owner == "Huda")
            // A lone server shows no nodes table (the cluster's test shows one).
            #expect(try await browser.run("return window.majlisConsole.state.nodes?.nodes?.length") == 1)
            #expect(try await browser.run("return document.querySelector('section.nodes')") == .null)
            // A room's seats and members.
            try await browser.run("document.querySelector('[data-action=open][data-room=salon]').click()")
            try await browser.wait(for: "the room", "return document.querySelector('tr[data-member=omar]') !== null")
            // Names, with the id on hover.
            let seated = try await browser.run("const name = document.querySelector('tr[data-seat=\"1\"] bdi'); return { text: name.textContent, id: name.title }")
            #expect(seated["text"] == "Omar" && seated["id"] == "omar", "\(seated)")
            // What is being typed survives the refreshes every 2 s.
            try await browser.run("const input = document.querySelector('[data-form=say] input'); input.focus(); input.value = 'half a thought'; window.refreshesBefore = window.majlisConsole.state.refreshes")
            try await browser.wait(for: "two refreshes", "return window.majlisConsole.state.refreshes >= window.refreshesBefore + 2")
            let typing = try await browser.run("const input = document.querySelector('[data-form=say] input'); return { value: input.value, focused: document.activeElement === input }")
            #expect(typing["value"] == "half a thought" && typing["focused"] == true, "\(typing)")
            // Mute everyone: the members hear of it.
            try await browser.run("document.querySelector('[data-action=mute-all]').click()")
            _ = try await guest.event("seat.updated") { $0["data"]?["seats"]?.arrayValue?.count == 4 }
            try await browser.wait(for: "the seats shown muted", "return document.querySelectorAll('.seats-table td:nth-child(3)').length === 4 && [...document.querySelectorAll('.seats-table td:nth-child(3)')].every((cell) => cell.textContent !== '')")
            // A message from the system.
            try await browser.run("const f = document.querySelector('[data-form=say]'); f.elements.text.value = 'Welcome, all'; f.requestSubmit()")
            let message = try await guest.event("chat.message")
            #expect(message["data"]?["from"]?["id"] == "system" && message["data"]?["text"] == "Welcome, all")
            #expect(try await browser.run("return document.querySelector('[data-form=say] input').value") == "")
            // Ban the guest, after saying for how long: out at once, listed as banned, and let back.
            try await browser.run("document.querySelector('[data-action=ban][data-user=omar]').click()")
            #expect(try await browser.run("return document.querySelector('.dialog p').textContent") == "Remove Omar and ban them for a day?")
            try await browser.run("document.querySelector('[data-action=confirm-yes]').click()")
            #expect(try await guest.closed() == CloseCode.kicked.rawValue)
            try await browser.wait(for: "the guest gone", "return document.querySelector('tr[data-member=omar]') === null")
            #expect(try await ServerAPITests.call(server, "GET", "/v1/rooms/salon/bans").body["bans"]?.arrayValue?.first?["user"] == "omar")
            try await browser.wait(for: "the ban listed", "return document.querySelector('tr[data-ban=omar] [data-action=unban]') !== null")
            #expect(try await browser.run("return document.querySelector('tr[data-ban=omar] bdi').textContent") == "Omar")
            try await browser.run("document.querySelector('tr[data-ban=omar] [data-action=unban]').click()")
            try await browser.wait(for: "the ban lifted", "return document.querySelector('tr[data-ban=omar]') === null")
            #expect(try await ServerAPITests.call(server, "GET", "/v1/rooms/salon/bans").body["bans"]?.arrayValue == [])
            // The webhook queue: every event delivered, listed.
            try await browser.wait(for: "the webhooks", "return document.querySelectorAll('tr[data-event]').length >= 6 && window.majlisConsole.state.hooks.queueDepth === 0")
            // End the room (confirming): the host is told, and the room leaves the list.
            try await browser.run("document.querySelector('section.room [data-action=end]').click()")
            try await browser.run("document.querySelector('[data-action=confirm-yes]').click()")
            _ = try await host.event("room.ended")
            try await browser.wait(for: "one room left", "return document.querySelectorAll('tr[data-room]').length === 1 && document.querySelector('section.room') === null")
            // In Arabic, mirrored, every word translated.
            try await browser.run("const s = document.querySelector('[data-action=language]'); s.value = 'ar'; s.dispatchEvent(new Event('change', {bubbles: true}))")
            let layout = try await browser.run("return { dir: getComputedStyle(document.documentElement).direction, title: document.querySelector('header h1').textContent }")
            #expect(layout["dir"] == "rtl" && layout["title"] == "لوحة تشغيل مجلس")
            let shot = try await browser.screenshot()
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-console.png").path
            try shot.write(to: URL(fileURLWithPath: path))
            print("screenshot of the console in Arabic: \(path) (\(shot.count) bytes)")
        }
    }

    @Test func aTokenWithoutAdminIsRefused() async throws {
        let server = try TestServer { config in
            config.webDirectory = BrowserTests.web
        }
        defer { server.destroy() }
        let browser = try await Browser(microphone: nil)
        try await Browser.closing([browser]) {
            try await browser.open("http://127.0.0.1:\(server.server.port)/console")
            try await browser.wait(for: "the sign-in form", "return document.querySelector('[data-form=sign-in]') !== null")
            try await browser.run("const f = document.querySelector('[data-form=sign-in]'); f.elements.token.value = arguments[0]; f.requestSubmit()", [.string(server.token("omar"))])
            let error = try await browser.wait(for: "the refusal", "return document.querySelector('[data-form=sign-in] .error')?.textContent || null")
            #expect(error.stringValue?.isEmpty == false)
            // Not in development mode: no development key is offered, and the form says what to paste.
            try await browser.wait(for: "the explanation", "return document.querySelector('[data-form=sign-in] .hint')?.textContent.includes('paste an admin token') || null")
            #expect(try await browser.run("return document.querySelector('[data-action=development]')") == .null)
        }
    }
}
