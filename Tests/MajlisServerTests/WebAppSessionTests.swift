import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// The web app in headless Chromium as people use it over a whole session: a host who reloads,
/// words composed with an input method while the room moves, what the host does told to the
/// guest, and the ways an app signs its people in when the server has real keys. Each test goes
/// through `RealTimeGate` in pairs, so at most two of these browsers run at once.
@Suite(.enabled(if: Browser.isAvailable, "needs chromium and chromium-driver (scripts/install-deps --test)"))
struct WebAppSessionTests {
    static func text(_ browser: Browser, _ selector: String) async throws -> String {
        try await browser.run("return document.querySelector(arguments[0])?.textContent?.trim() ?? ''", [.string(selector)]).stringValue ?? ""
    }

    @Test func aHostReloadsAndRunsTheRoomOnAndAGuestIsToldWhatTheHostDoes() async throws {
        try await RealTimeGate.inPairs {
            let server = try TestServer { config in
                config.developmentKey = TestServer.key
                config.resumeGrace = 2
            }
            defer { server.destroy() }
            let host = try await Browser(microphone: nil)
            let guest = try await Browser(microphone: nil)
            try await Browser.closing([host, guest]) {
                try await BrowserTests.join(host, server: server, room: "salon", name: "Huda")
                try await host.click("[data-action=take]")
                try await host.wait(for: "Huda seated", "return window.majlis.state.seats[0].user === window.majlis.state.me.id")
                let hostId = try await host.run("return window.majlis.state.me.id").stringValue ?? ""
                try await BrowserTests.join(guest, server: server, room: "salon", name: "Omar")
                // Member counts are right on every page, the earlier member's too.
                for browser in [host, guest] {
                    try await browser.wait(for: "two here", "return document.querySelector('header .count')?.textContent === '2 here'")
                }
                #expect(try await Self.text(host, "header .you") == "You are the host")

                // The host reloads: the same member comes back, host, on the same seat, under the
                // same name, and is still all that once the old connection's grace has passed.
                try await host.open("http://127.0.0.1:\(server.server.port)/?room=salon")
                try await host.wait(for: "the host back in the room", "return window.majlis.page.step === 'room' && document.querySelector('.seats li') !== null")
                try await Task.sleep(for: .seconds(4))  // past the 2 s resume grace of the old connection
                let back = try await host.run(
                    "return { id: window.majlis.state.me.id, role: window.majlis.state.role, seat: window.majlis.state.seats[0].user, count: window.majlis.state.room.memberCount }")
                #expect(back["id"]?.stringValue == hostId && back["role"] == "owner" && back["seat"]?.stringValue == hostId && back["count"] == 2, "\(back)")
                #expect(try await guest.run("return window.majlis.state.members.get(arguments[0])?.name", [.string(hostId)]) == "Huda")
                #expect(try await guest.run("return window.majlis.state.room.memberCount") == 2)

                // The guest asks to speak; the host, back after the reload, accepts.
                try await guest.click("[data-action=take]")
                try await host.wait(for: "the request at the host", "return document.querySelector('[data-action=accept]') !== null")
                try await host.click("[data-action=accept]")
                let seat = try await guest.wait(for: "Omar seated", "const s = window.majlis.state.seats.find((s) => s.user === window.majlis.state.me.id); return s ? s.index : null").intValue ?? 1

                // The host mutes the guest's seat: the guest is told, and its mic button says so.
                try await host.click("[data-seat='\(seat)'] .avatar")
                try await host.click("[data-seat='\(seat)'] [data-action=mute]")
                try await guest.wait(for: "the notice", "return [...document.querySelectorAll('.notices p')].some((p) => p.textContent === 'The host muted your seat')")
                let button = try await guest.run("const b = document.querySelector('[data-action=mic]'); return { text: b.textContent.trim(), disabled: b.disabled }")
                #expect(button["text"] == "Muted by the host" && button["disabled"] == true, "\(button)")

                // Made an admin: told; removed and banned after a confirmation that says for how long.
                try await host.click("[data-action=tab][data-value=members]")
                let guestId = try await guest.run("return window.majlis.state.me.id").stringValue ?? ""
                try await host.click("[data-member='\(guestId)'] .who")
                try await host.click("[data-member='\(guestId)'] [data-action=admin]")
                try await guest.wait(for: "the admin notice", "return [...document.querySelectorAll('.notices p')].some((p) => p.textContent === 'You are now an admin of this room')")
                // Its seat muted before it could moderate: now an admin, it may unmute it itself.
                try await guest.click(".unmute-mine")
                try await guest.wait(for: "the seat unmuted", "return !window.majlis.state.seats[\(seat)].muted && document.querySelector('[data-action=mic]:not([disabled])') !== null")
                try await host.click("[data-member='\(guestId)'] .who")
                try await host.wait(for: "the member's menu", "return document.querySelector(`[data-member='${arguments[0]}'] [data-action=kick]`) !== null".replacingOccurrences(of: "${arguments[0]}", with: guestId))
                #expect(try await host.run("return document.querySelector(`[data-member='${arguments[0]}'] [data-action=invite]`)", [.string(guestId)]) == .null)
                try await host.click("[data-member='\(guestId)'] [data-action=kick]")
                let question = try await host.wait(for: "the confirmation", "return document.querySelector('.dialog p')?.textContent || null")
                #expect(question == "Remove Omar and keep them out for an hour?")
                try await host.click("[data-action=confirmYes]")
                try await host.wait(for: "the removal said as it was", "return [...document.querySelectorAll('.notices p')].some((p) => p.textContent === 'Omar was removed from the room')")
                try await guest.wait(for: "the guest removed", "return window.majlis.page.step === 'ended'")
                #expect(try await Self.text(guest, ".ended p").hasPrefix("You were removed from the room and may not come back until"))
                // Joining again from the same browser is the same user, still banned.
                try await guest.click("[data-action=rejoin]")
                let refusal = try await guest.wait(for: "the ban", "return document.querySelector('[data-form=join] .error')?.textContent || null")
                #expect(refusal == "You are banned from this room")
                try await host.wait(for: "one here", "return document.querySelector('header .count')?.textContent === '1 here'")
                // After leaving, the host goes to another room from the page.
                try await host.click("[data-action=leave]")
                try await host.click("[data-action=otherRoom]")
                try await host.wait(for: "the join form", "return document.querySelector('[data-form=join] [name=room]')?.value === 'majlis'")
            }
        }
    }

    /// A room made from a title is found by that title in any case, and after it ended "Join
    /// again" offers to make it again under its title, not its id.
    @Test func aRoomMadeFromATitleKeepsItsTitleAfterItEnds() async throws {
        try await RealTimeGate.inPairs {
            let server = try BrowserTests.server()
            defer { server.destroy() }
            let browser = try await Browser(microphone: nil)
            try await Browser.closing([browser]) {
                try await browser.open("http://127.0.0.1:\(server.server.port)/")
                try await browser.wait(for: "the join form", "return document.querySelector('[data-form=join]') !== null")
                try await browser.run(
                    "const f = document.querySelector('[data-form=join]'); f.elements.name.value = 'Huda'; f.elements.room.value = 'Friday Salon'; f.requestSubmit()")
                try await browser.wait(for: "asked to create it", "return document.querySelector('[data-form=create]') !== null")
                try await browser.run("const f = document.querySelector('[data-form=create]'); f.elements.mode.value = 'free'; f.requestSubmit()")
                try await browser.wait(for: "in the room", "return window.majlis.page.step === 'room' && window.majlis.state.room?.title === 'Friday Salon'")
                let id = try await browser.run("return window.majlis.state.room.id").stringValue ?? ""
                #expect(try await browser.run("return location.search") == .string("?room=\(id)"))
                try await browser.click("[data-action=end]")
                try await browser.click("[data-action=confirmYes]")
                try await browser.wait(for: "the room ended", "return window.majlis.page.step === 'ended'")
                try await browser.click("[data-action=rejoin]")
                let offer = try await browser.wait(for: "the offer to make it again", "return document.querySelector('[data-form=create] p')?.textContent || null")
                #expect(offer == "There is no room “Friday Salon” yet. Create it, with you as its host?")
            }
        }
    }

    /// Chinese composed with an input method (DevTools' Input.imeSetComposition, as Chrome's IME
    /// drives a page) while two bots speak and the page redraws for their levels: the message
    /// arrives as composed, and the field is the same element, focused, throughout.
    @Test func compositionSurvivesARoomThatMoves() async throws {
        try await RealTimeGate.inPairs {
            let server = try TestServer { $0.developmentKey = TestServer.key }
            defer { server.destroy() }
            let token = { (user: String) in server.token(user, grants: Grants(create: true)) }
            let first = try JoinBotTests.Bot(["--url", server.url, "--token", token("tone1"), "--room", "chai", "--create", "--seat", "2", "--mic", "tone:440", "--duration", "60"])
            let watcher = try await TestClient.signedIn(server, user: "watcher")
            #expect(await eventually { (try? await watcher.call("room.join", room: "chai")) != nil })
            let second = try JoinBotTests.Bot(["--url", server.url, "--token", token("tone2"), "--room", "chai", "--seat", "3", "--mic", "tone:660", "--duration", "60"])
            let browser = try await Browser(microphone: nil, language: "zh")
            try await Browser.closing([browser]) {
                try await BrowserTests.join(browser, server: server, room: "chai", name: "小明")
                try await browser.wait(for: "both bots speaking", "return window.majlis.state.levels.size >= 2")
                try await browser.run("const input = document.querySelector('[data-form=chat] input'); input.focus(); window.composeField = input; window.drawsBefore = window.majlis.page.draws")
                for (text, caret) in [("n", 1), ("ni", 2), ("nih", 3), ("niha", 4), ("nihao", 5)] {
                    try await browser.devTools("Input.imeSetComposition", ["text": .string(text), "selectionStart": .int(Int64(caret)), "selectionEnd": .int(Int64(caret))])
                    try await Task.sleep(for: .milliseconds(300))
                }
                try await browser.devTools("Input.insertText", ["text": "你好"])
                let field = try await browser.run(
                    "const input = document.querySelector('[data-form=chat] input'); return { value: input.value, same: input === window.composeField, focused: document.activeElement === input, redraws: window.majlis.page.draws - window.drawsBefore }")
                #expect(field["value"] == "你好" && field["same"] == true && field["focused"] == true, "\(field)")
                #expect((field["redraws"]?.intValue ?? 0) > 0, "the page was not redrawn while composing: \(field)")
                try await browser.run("document.querySelector('[data-form=chat]').requestSubmit()")
                try await browser.wait(for: "the message", "return [...document.querySelectorAll('.message > bdi')].some((e) => e.textContent === '你好')")
                let shot = try await browser.screenshot()
                let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-chinese-desktop.png").path
                try shot.write(to: URL(fileURLWithPath: path))
                print("screenshot of the Chinese room at 1280x800: \(path)")
            }
            first.interrupt()
            second.interrupt()
            _ = await first.finish()
            _ = await second.finish()
        }
    }

    /// With real keys the page has no development tokens: it goes in with a token in the
    /// address's fragment, one from the app's token URL (the example backend of docs/web.md, with
    /// the app's cookie), or one posted by the app's page that embeds it.
    /// Leave pressed the moment the room shows, while its microphone and media are still
    /// starting: the page says the visit is over and stays so (what leaving cut short is no
    /// error sending it back to the join form), and the microphone it was opening is closed.
    @Test func leavingWhileTheRoomStartsEndsTheVisit() async throws {
        try await RealTimeGate.inPairs {
            let server = try TestServer { config in config.developmentKey = TestServer.key }
            defer { server.destroy() }
            let watcher = try await TestClient.signedIn(server, user: "watcher")
            _ = try await watcher.call("room.create", room: "salon")
            let browser = try await Browser(microphone: nil)
            try await Browser.closing([browser]) {
                try await browser.open("http://127.0.0.1:\(server.server.port)/?room=salon")
                try await browser.wait(for: "the join form", "return document.querySelector('[data-form=join]') !== null")
                // Leave is clicked in the first frame that shows it.
                try await browser.run(
                    """
                    const leave = () => {
                      const button = document.querySelector('[data-action=leave]');
                      if (button) button.click(); else requestAnimationFrame(leave);
                    };
                    requestAnimationFrame(leave);
                    const form = document.querySelector('[data-form=join]');
                    form.elements.name.value = 'Sami';
                    form.requestSubmit();
                    """)
                _ = try await watcher.event("member.joined")
                _ = try await watcher.event("member.left")
                try await browser.wait(
                    for: "the microphone closed after leaving",
                    "const m = window.majlis.media(); return m?.stopped === true && m.stream != null && m.stream.getTracks().every((t) => t.readyState === 'ended')")
                try await browser.wait(for: "the visit over", "return window.majlis.page.step === 'ended'")
                #expect(try await browser.run("return document.querySelector('[data-form=join]') === null && document.body.innerText.includes('You left the room')") == .bool(true))
            }
        }
    }

    /// The app's support asks a page in a room for its log: the page uploads the lines it kept
    /// (its connection's steps among them) and hands them over, without its token.
    @Test func aPageSendsItsLogWhenSupportAsks() async throws {
        try await RealTimeGate.inPairs {
            let server = try TestServer { config in config.developmentKey = TestServer.key }
            defer { server.destroy() }
            let browser = try await Browser(microphone: nil)
            try await Browser.closing([browser]) {
                try await BrowserTests.join(browser, server: server, room: "salon", name: "Huda")
                let user = try await browser.run("return window.majlis.state.me.id").stringValue ?? ""
                let asked = try await ServerAPITests.call(server, "POST", "/v1/users/\(user)/logs", #"{"minutes": 10, "reason": "ticket 12"}"#)
                let id = try #require(asked.body["request"]?["id"]?.stringValue, "\(asked)")
                let deadline = Date().addingTimeInterval(30)
                while try await ServerAPITests.call(server, "GET", "/v1/logs/\(id)").body["request"]?["state"] != "delivered" {
                    guard Date() < deadline else {
                        throw Browser.Failure(description: "the page never delivered its log; its log then: \(try await browser.run("return window.majlis.page.log"))")
                    }
                    try await Task.sleep(for: .milliseconds(200))
                }
                var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.server.port)/v1/logs/\(id)/content")!)
                request.setValue("Bearer \(ServerAPITests.adminToken(server))", forHTTPHeaderField: "Authorization")
                let (data, _) = try await URLSession.shared.data(for: request)
                let log = String(decoding: data, as: UTF8.self)
                #expect(log.contains("info open") && log.contains("/v1/signal"), "\(log)")
                let token = try await browser.run("return window.majlis.signal()?.token || ''").stringValue ?? ""
                #expect(token.count > 20 && !log.contains(token), "\(log)")
            }
        }
    }

    @Test func withKeysTheAppSignsItsPeopleIn() async throws {
        try await RealTimeGate.inPairs {
            let backendPort = try Browser.freePort()
            let server = try TestServer { config in
                config.tokenURL = "http://127.0.0.1:\(backendPort)/majlis-token"
                config.allowedOrigins = ["http://127.0.0.1:\(backendPort)"]
            }
            defer { server.destroy() }
            let majlis = "http://127.0.0.1:\(server.server.port)"
            let example = URL(fileURLWithPath: BrowserTests.web).deletingLastPathComponent().appendingPathComponent("docs/examples/token-backend.py").path
            let backend = Process()
            backend.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            backend.arguments = ["python3", example, "--majlis", majlis, "--key", TestServer.key, "--secret", server.secret, "--listen", "127.0.0.1:\(backendPort)"]
            let output = Pipe()
            backend.standardOutput = output
            try backend.run()
            defer {
                // SIGKILL: a child of a test thread may have SIGTERM blocked (it inherits the mask).
                kill(backend.processIdentifier, SIGKILL)
                backend.waitForExit()
            }
            #expect(String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).contains("app backend on"))
            let watcher = try await TestClient.signedIn(server, user: "watcher")
            _ = try await watcher.call("room.create", room: "salon")

            let browser = try await Browser(microphone: nil)
            try await Browser.closing([browser]) {
                // Without a token URL the join form says where tokens come from and takes one pasted.
                let plain = try TestServer()
                defer { plain.destroy() }
                try await browser.open("http://127.0.0.1:\(plain.server.port)/?room=salon")
                try await browser.wait(for: "the token field", "return document.querySelector('[data-form=join] input[name=token]') !== null")
                #expect(try await browser.run("return document.querySelector('[data-form=join] input[name=name]')") == .null)
                try await browser.run(
                    "const f = document.querySelector('[data-form=join]'); f.elements.token.value = arguments[0]; f.requestSubmit()", [.string(plain.token("zaid", grants: Grants(create: true)))])
                try await browser.wait(for: "asked to create the room", "return document.querySelector('[data-form=create]') !== null")
                try await browser.run("document.querySelector('[data-form=create]').requestSubmit()")
                try await browser.wait(for: "Zaid in the room", "return window.majlis.page.step === 'room' && window.majlis.state.role === 'owner'")
                try await browser.run("sessionStorage.clear()")

                // A token in the query (sent to the server, in its logs): not used, taken out.
                try await browser.open("\(majlis)/?room=salon&token=\(server.token("sami", grants: Grants()))&ref=mail")
                try await browser.wait(for: "the join form", "return document.querySelector('[data-form=join]') !== null")
                #expect(try await browser.run("return location.href") == .string("\(majlis)/?room=salon&ref=mail"))
                #expect(try await browser.run("return window.majlis.page.step") != .string("room"))
                #expect(try await browser.run("return sessionStorage.getItem('majlis.token')") == .null)

                // A token in the fragment: in at once, and the token leaves the address bar.
                try await browser.open("\(majlis)/?room=salon#token=\(server.token("layla", grants: Grants()))")
                try await browser.wait(for: "Layla in the room", "return window.majlis.page.step === 'room'")
                #expect(try await browser.run("return location.href") == .string("\(majlis)/?room=salon"))
                #expect(try await watcher.event("member.joined")["data"]?["member"]?["id"] == "layla")
                try await browser.click("[data-action=leave]")
                try await browser.wait(for: "Layla gone", "return window.majlis.page.step === 'ended'")
                _ = try await watcher.event("member.left")

                // The app's token URL, with the app's own sign-in cookie.
                try await browser.run("sessionStorage.clear()")
                try await browser.open("http://127.0.0.1:\(backendPort)/login?user=huda&name=Huda")
                try await browser.open("\(majlis)/?room=salon")
                try await browser.wait(for: "the join form", "return document.querySelector('[data-form=join]') !== null")
                try await browser.run("document.querySelector('[data-form=join]').requestSubmit()")
                try await browser.wait(for: "Huda in the room", "return window.majlis.page.step === 'room'")
                #expect(try await watcher.event("member.joined")["data"]?["member"]?["name"] == "Huda")
                try await browser.click("[data-action=leave]")
                _ = try await watcher.event("member.left")

                // The app's page embeds the room and posts it the token.
                try await browser.run("sessionStorage.clear()")
                try await browser.open("http://127.0.0.1:\(backendPort)/login?user=omar&name=Omar")
                try await browser.open("http://127.0.0.1:\(backendPort)/?room=salon")
                let joined = try await watcher.event("member.joined")
                #expect(joined["data"]?["member"]?["id"] == "omar" && joined["data"]?["member"]?["name"] == "Omar")
            }
        }
    }
}

extension WebAppSessionTests {
    /// The join page and a room with a host's menu open, at phone and desktop size, in each
    /// language: nothing wider than the screen, the join page not scrolling at all, the menu
    /// inside the screen; screenshots kept in the temporary folder to look at.
    @Test func everyLanguageFitsAPhoneAndADesktop() async throws {
        try await RealTimeGate.inPairs {
            let server = try TestServer { $0.developmentKey = TestServer.key }
            defer { server.destroy() }
            let sizes = [(360, 740), (1280, 800)]
            for language in ["en", "zh", "ar", "ja"] {
                // One browser a language, its window made each size in turn (as a phone or a
                // desktop shows it: the page's layout follows the viewport).
                let browser = try await Browser(microphone: nil, width: 1280, height: 800, language: language)
                try await Browser.closing([browser]) {
                    func size(_ width: Int, _ height: Int, mobile: Bool? = nil) async throws {
                        try await browser.devTools(
                            "Emulation.setDeviceMetricsOverride",
                            ["width": .int(Int64(width)), "height": .int(Int64(height)), "screenWidth": .int(Int64(width)), "screenHeight": .int(Int64(height)),
                             "deviceScaleFactor": .int(1), "mobile": .bool(mobile ?? (width < 600))])
                        // The screen is the size asked for (a page wider than a phone's screen widens
                        // the window itself, so the window's width would hide it), a frame drawn since.
                        try await browser.wait(for: "the screen at \(width)", "return screen.width === \(width)")
                        try await browser.run("return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))")
                    }
                    // How far the page reaches past the screen's edges (CSS pixels; 0: it fits).
                    func overflowX(_ width: Int) -> String {
                        """
                        let worst = 0;
                        for (const element of document.body.querySelectorAll('*')) {
                          const box = element.getBoundingClientRect();
                          if (box.width > 0) worst = Math.max(worst, box.right - \(width), -box.left);
                        }
                        return Math.round(worst);
                        """
                    }
                    try await browser.open("http://127.0.0.1:\(server.server.port)/?room=fit-\(language)")
                    try await browser.wait(for: "the join form", "return document.querySelector('[data-form=join]') !== null")
                    for (width, height) in sizes {
                        try await size(width, height)
                        let join = try await browser.run(
                            "const e = document.documentElement; return { overflowX: (() => { \(overflowX(width)) })(), overflowY: e.scrollHeight - e.clientHeight }")
                        #expect(join["overflowX"] == 0 && join["overflowY"] == 0, "\(language) \(width): \(join)")
                    }
                    try await BrowserTests.join(browser, server: server, room: "fit-\(language)", name: language == "ar" ? "ليلى" : language == "zh" ? "小明" : "Layla")
                    try await browser.click("[data-action=seat][data-value=\"1\"]")
                    try await browser.wait(for: "the seat's menu", "return document.querySelector('.seat .menu') !== null")
                    for (width, height) in sizes {
                        try await size(width, height)
                        let room = try await browser.run(
                            """
                            const menu = document.querySelector('.seat .menu').getBoundingClientRect();
                            return { overflowX: (() => { \(overflowX(width)) })(), menuInside: menu.left >= 0 && menu.right <= \(width) && menu.bottom <= window.innerHeight }
                            """)
                        #expect(room["overflowX"] == 0 && room["menuInside"] == true, "\(language) \(width): \(room)")
                        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-room-\(language)-\(width).png").path
                        try await browser.screenshot().write(to: URL(fileURLWithPath: path))
                        print("screenshot: \(path)")
                    }
                    // The sound tab (its file picker and effect list) fits too, in a desktop
                    // browser's window as narrow as a phone as well (its file picker is wider).
                    try await browser.click("[data-action=tab][data-value=sound]")
                    try await browser.wait(for: "the sound tab", "return document.querySelector('select[name=effect]') !== null")
                    for (width, height, mobile) in [(360, 740, true), (360, 740, false), (1280, 800, false)] {
                        try await size(width, height, mobile: mobile)
                        let sound = try await browser.run("return { overflowX: (() => { \(overflowX(width)) })() }")
                        #expect(sound["overflowX"] == 0, "\(language) \(width) \(mobile ? "phone" : "desktop"), the sound tab: \(sound)")
                    }
                    let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-sound-\(language).png").path
                    try await browser.screenshot().write(to: URL(fileURLWithPath: path))
                    print("screenshot: \(path)")
                }
            }
        }
    }
}
