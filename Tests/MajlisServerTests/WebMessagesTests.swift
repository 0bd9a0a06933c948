import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The web app's conversations page (`/messages`) in headless Chromium: two people on two pages
/// (one in Arabic, right to left, at a phone's width) and a bot write to each other one to one
/// and in a group, with unread marks, typing and read marks, and cards shown by their fallback.
@Suite(.enabled(if: Browser.isAvailable, "needs chromium and chromium-driver (scripts/install-deps --test)"))
struct WebMessagesTests {
    static func page(_ browser: Browser, _ server: TestServer, user: String, language: String? = nil) async throws {
        let token = server.token(user, name: user.capitalized)
        try await browser.open("http://127.0.0.1:\(server.server.port)/messages\(language.map { "?lang=\($0)" } ?? "")#token=\(token)")
        try await browser.wait(for: "\(user)'s conversations", "return window.majlis?.page.step === 'ready'")
    }

    static func submit(_ browser: Browser, _ form: String, _ fields: [String: String]) async throws {
        try await browser.run(
            """
            const form = document.querySelector(`[data-form=${arguments[0]}]`);
            for (const [name, value] of Object.entries(arguments[1])) form.elements[name].value = value;
            form.requestSubmit();
            """, [.string(form), .object(fields.mapValues(JSONValue.string))])
    }

    @Test func twoPeopleAndABotWriteEachOtherOnThePage() async throws {
        try await RealTimeGate.inPairs {
            let server = try TestServer()
            defer { server.destroy() }
            let huda = try await Browser(microphone: nil, width: 390, height: 844, language: "ar")
            let omar = try await Browser(microphone: nil)
            try await Browser.closing([huda, omar]) {
                try await Self.page(huda, server, user: "huda", language: "ar")
                try await Self.page(omar, server, user: "omar")
                #expect(try await huda.run("return document.documentElement.dir") == "rtl")

                // Huda writes first; Omar's list shows it unread.
                try await Self.submit(huda, "chat", ["to": "omar", "text": "مرحبا يا عمر"])
                try await huda.wait(for: "the message in Huda's conversation", "return document.querySelector('.message.mine .text')?.textContent === 'مرحبا يا عمر'")
                try await omar.wait(for: "one unread at Omar", "return document.querySelector('.top .badge')?.dataset.unread === '1'")
                #expect(try await omar.run("return document.querySelector('.conversation .preview').textContent") == "مرحبا يا عمر")

                // Omar opens it: Huda sees it read. Omar types: Huda sees it. Omar answers.
                try await omar.click("[data-action=open]")
                try await omar.wait(for: "the message at Omar", "return document.querySelector('.message.theirs .text')?.textContent === 'مرحبا يا عمر'")
                try await huda.wait(for: "the read mark", "return document.querySelector('.message.mine .read') !== null")
                #expect(try await omar.run("return document.querySelector('.top .badge')") == .null)
                try await omar.run(
                    "const input = document.querySelector('[data-form=send] input[name=text]'); input.value = 'Hel'; input.dispatchEvent(new Event('input', { bubbles: true }))")
                try await huda.wait(for: "Omar typing", "return document.querySelector('.typing').textContent.includes('omar')")
                try await Self.submit(omar, "send", ["text": "Hello Huda"])
                try await huda.wait(for: "the answer", "return [...document.querySelectorAll('.message.theirs .text')].some((p) => p.textContent === 'Hello Huda')")
                try await huda.wait(for: "typing over", "return document.querySelector('.typing').textContent === ''")

                // A bot sends Omar cards: one the page knows (a room invitation), one it does not.
                let bot = try await TestClient.signedIn(server, user: "bot-trips")
                _ = try await bot.request("msg.send", ["to": "omar", "type": "room_invite", "payload": ["room": "salon"], "fallback": "Join my room", "clientMsgId": "b1"])
                _ = try await bot.request("msg.send", ["to": "omar", "type": "paper_boat", "payload": ["bottle": 7], "fallback": "A paper boat drifted in", "clientMsgId": "b2"])
                try await omar.click("[data-action=back]")
                try await omar.wait(for: "the bot's conversation", "return [...document.querySelectorAll('.conversation .preview')].some((p) => p.textContent === 'A paper boat drifted in')")
                try await omar.run("[...document.querySelectorAll('.conversation')].find((b) => b.textContent.includes('bot-trips')).click()")
                try await omar.wait(for: "the cards", "return document.querySelectorAll('.message.theirs').length === 2")
                #expect(try await omar.run("return document.querySelector('.message .card').getAttribute('href')") == "/?room=salon")
                #expect(try await omar.run("return document.querySelector('.message .fallback').textContent") == "A paper boat drifted in")

                // A group: Huda makes it, Omar finds it in his list and reads Huda's message there.
                try await huda.click("[data-action=back]")
                try await Self.submit(huda, "group", ["title": "رحلة", "members": "omar"])
                try await huda.wait(for: "the group open", "return document.querySelector('.conversation-view h2')?.textContent === 'رحلة'")
                try await Self.submit(huda, "send", ["text": "نلتقي في التاسعة"])
                try await omar.click("[data-action=back]")
                try await omar.wait(for: "the group at Omar", "return [...document.querySelectorAll('.conversation .name')].some((n) => n.textContent === 'رحلة')")
                try await omar.wait(for: "its message unread", "return document.querySelector('.conversation .badge')?.dataset.unread === '1'")
                try await omar.run("[...document.querySelectorAll('.conversation')].find((b) => b.textContent.includes('رحلة')).click()")
                try await omar.wait(for: "Huda's name on her message", "return document.querySelector('.message.theirs .from')?.textContent === 'Huda'")
                try await huda.wait(for: "read by one", "return document.querySelector('.message.mine .read')?.dataset.readers === '1'")
                #expect(try await huda.run("return document.querySelector('.message.mine .read').textContent") == "قرأها واحد")

                // They wrote to each other: each sees whether the other is online, in the
                // conversation and as a dot in the list; Omar's page closed, Huda sees when he was last.
                try await huda.click("[data-action=back]")
                try await huda.run("[...document.querySelectorAll('.conversation')].find((b) => b.textContent.includes('omar')).click()")
                try await huda.wait(for: "Omar online", "return document.querySelector('.presence-line')?.dataset.presence === 'online'")
                #expect(try await huda.run("return document.querySelector('.presence-line').textContent") == "متصل الآن")
                try await huda.click("[data-action=back]")
                try await huda.wait(for: "Omar's dot", "return document.querySelector('.conversation .presence[data-presence=online]') !== null")
                try await huda.run("[...document.querySelectorAll('.conversation')].find((b) => b.textContent.includes('omar')).click()")
                try await omar.open("about:blank")
                try await huda.wait(for: "Omar last seen", "return document.querySelector('.presence-line')?.dataset.presence === 'offline'")
                #expect(try await huda.run("return document.querySelector('.presence-line').textContent.startsWith('آخر ظهور')") == true)
                try await omar.open("http://127.0.0.1:\(server.server.port)/messages#token=\(server.token("omar", name: "Omar"))")
                try await omar.wait(for: "Omar's page again", "return window.majlis?.page.step === 'ready'")

                // At a phone's width nothing spills sideways.
                #expect(try await huda.run("return document.documentElement.scrollWidth <= window.innerWidth") == true)
                for (name, browser) in [("ar-390", huda), ("en-1280", omar)] {
                    let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-messages-\(name).png").path
                    try await browser.screenshot().write(to: URL(fileURLWithPath: path))
                    print("screenshot: \(path)")
                }
            }
        }
    }

    /// A photo (with a thumbnail the page makes) and a voice message recorded from the
    /// microphone go from one page to the other by the resumable upload: the recipient sees the
    /// thumbnail, then the whole photo byte for byte, and can play the voice message.
    @Test func photosAndVoiceMessagesGoFromPageToPage() async throws {
        try await RealTimeGate.inPairs {
            let server = try TestServer()
            defer { server.destroy() }
            let huda = try await Browser(microphone: try WebAppFailoverTests.toneFile(), width: 390, height: 844)
            let omar = try await Browser(microphone: nil)
            try await Browser.closing([huda, omar]) {
                try await Self.page(huda, server, user: "huda")
                try await Self.page(omar, server, user: "omar")
                try await Self.submit(huda, "chat", ["to": "omar", "text": "look"])
                try await huda.wait(for: "the conversation open", "return document.querySelector('[data-form=send]') !== null")

                // An 800 x 600 PNG, chosen in the file input as a person would.
                let digest = """
                    window.digest = (bytes) => { let h = 2166136261; for (const b of bytes) h = Math.imul(h ^ b, 16777619) >>> 0; return `${bytes.length}:${h}`; };
                    """
                try await huda.run(
                    digest + """
                    const canvas = document.createElement('canvas'); canvas.width = 800; canvas.height = 600;
                    const g = canvas.getContext('2d');
                    for (let x = 0; x < 800; x += 8) { g.fillStyle = `hsl(${x % 360}, 80%, ${30 + (x % 50)}%)`; g.fillRect(x, 0, 8, 600); }
                    const binary = atob(canvas.toDataURL('image/png').split(',')[1]);
                    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
                    window.sent = window.digest(bytes);
                    const files = new DataTransfer(); files.items.add(new File([bytes], 'stripes.png', { type: 'image/png' }));
                    const input = document.querySelector('[data-input=file]'); input.files = files.files;
                    input.dispatchEvent(new Event('change', { bubbles: true }));
                    """)
                try await huda.wait(for: "the photo sent", "return document.querySelector('.message.pending') === null && document.querySelector('.message.mine .photo img') !== null")
                try await omar.click("[data-action=open]")
                try await omar.wait(
                    for: "the thumbnail at Omar",
                    "const img = document.querySelector('.message.theirs .photo img'); return img?.complete && img.naturalWidth === 320 && img.naturalHeight === 240")
                let message = try await omar.run("return window.majlis.state.messages.get(window.majlis.page.open).at(-1)")
                #expect(message["type"] == "image" && message["payload"]?["width"] == 800 && message["payload"]?["height"] == 600, "\(message)")
                #expect(message["payload"]?["mime"] == "image/png" && message["payload"]?["thumbnail"]?.stringValue != nil, "\(message)")
                try await omar.click(".message.theirs .photo")
                try await omar.wait(for: "the whole photo", "const img = document.querySelector('.message.theirs .photo img'); return img?.complete && img.naturalWidth === 800")
                // The bytes Omar may read are those Huda's page chose.
                let media = try #require(message["payload"]?["media"]?.stringValue)
                var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.server.port)/v1/media/\(media)")!)
                request.setValue("Bearer \(server.token("omar"))", forHTTPHeaderField: "Authorization")
                let (bytes, _) = try await URLSession.shared.data(for: request)
                let hash = bytes.reduce(UInt32(2_166_136_261)) { ($0 ^ UInt32($1)) &* 16_777_619 }
                #expect(try await huda.run("return window.sent") == .string("\(bytes.count):\(hash)"))
                #expect(try await huda.run("return document.documentElement.scrollWidth <= window.innerWidth") == true)

                // A voice message of about two seconds from the microphone.
                try await huda.click("[data-action=record]")
                try await huda.wait(for: "two seconds recorded", "return window.majlis.page.recording && performance.now() - window.majlis.page.recording.started > 2000")
                try await huda.click("[data-action=record]")
                try await huda.wait(for: "the voice message sent", "return document.querySelector('.message.pending') === null && document.querySelector('.message.mine .voice') !== null")
                try await omar.wait(for: "the voice message at Omar", "return document.querySelector('.message.theirs .voice audio')?.readyState >= 1")
                let voice = try await omar.run("return window.majlis.state.messages.get(window.majlis.page.open).at(-1)")
                #expect(voice["type"] == "voice" && voice["payload"]?["mime"] == "audio/webm" && (voice["payload"]?["size"]?.intValue ?? 0) > 1000, "\(voice)")
                #expect((voice["payload"]?["duration"]?.intValue ?? 0) >= 2000, "\(voice)")
                #expect(try await omar.run("return document.querySelector('.message.theirs .voice .duration').textContent").stringValue?.hasPrefix("0:0") == true)
                for (name, browser) in [("media-390", huda), ("media-1280", omar)] {
                    let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-messages-\(name).png").path
                    try await browser.screenshot().write(to: URL(fileURLWithPath: path))
                    print("screenshot: \(path)")
                }
                try await omar.click("[data-action=back]")
                #expect(try await omar.run("return document.querySelector('.conversation .preview').textContent").stringValue?.hasPrefix("Voice message 0:0") == true)
            }
        }
    }

    /// A photo whose upload is cut by a reload of the page goes on after it: the page keeps what it
    /// sends (with the file) in the browser, and the reloaded page sends it under its client id,
    /// the same upload going on from where the server stood; the recipient gets it once, byte
    /// for byte.
    @Test func aPhotoCutByAReloadGoesOnAndArrivesOnce() async throws {
        try await RealTimeGate.inPairs {
            let server = try TestServer()
            defer { server.destroy() }
            let omar = try await TestClient.signedIn(server, user: "omar")
            let huda = try await Browser(microphone: nil)
            try await Browser.closing([huda]) {
                try await Self.page(huda, server, user: "huda")
                try await Self.submit(huda, "chat", ["to": "omar", "text": "look"])
                try await huda.wait(for: "the conversation open", "return document.querySelector('[data-form=send]') !== null")
                _ = try await omar.event("msg.new")
                // Uploads at 64 KB/s: the photo (about 1.4 MB of noise) takes some 20 s.
                _ = try await huda.devTools("Network.enable", [:])
                _ = try await huda.devTools(
                    "Network.emulateNetworkConditions", ["offline": false, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 65_536])
                try await huda.run(
                    """
                    const canvas = document.createElement('canvas'); canvas.width = 800; canvas.height = 600;
                    const g = canvas.getContext('2d'); const noise = g.createImageData(800, 600);
                    let seed = 7; for (let i = 0; i < noise.data.length; i++) { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; noise.data[i] = i % 4 === 3 ? 255 : seed >>> 24; }
                    g.putImageData(noise, 0, 0);
                    const bytes = Uint8Array.from(atob(canvas.toDataURL('image/png').split(',')[1]), (c) => c.charCodeAt(0));
                    let h = 2166136261; for (const b of bytes) h = Math.imul(h ^ b, 16777619) >>> 0;
                    sessionStorage.setItem('sent', `${bytes.length}:${h}`);
                    const files = new DataTransfer(); files.items.add(new File([bytes], 'noise.png', { type: 'image/png' }));
                    const input = document.querySelector('[data-input=file]'); input.files = files.files;
                    input.dispatchEvent(new Event('change', { bubbles: true }));
                    """)
                try await huda.wait(
                    for: "a piece of the photo up", "return (window.majlis.state.pending.find((p) => p.draft.uploads)?.draft.uploads[0].offset ?? 0) >= 262144")
                let cut = try await huda.run(
                    """
                    const item = window.majlis.state.pending.find((p) => p.draft.uploads).draft.uploads[0];
                    if (item.offset >= item.length) return null;
                    const id = item.upload; location.reload(); return id;
                    """)
                let upload = try #require(cut.stringValue, "the upload finished before the reload")
                try await huda.wait(for: "the page again", "return window.majlis?.page.step === 'ready'")
                _ = try await huda.devTools("Network.emulateNetworkConditions", ["offline": false, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1])

                let photo = try await omar.event("msg.new", timeout: 90) { $0["data"]?["type"] == "image" }
                #expect(photo["data"]?["payload"]?["media"] == .string(upload), "the same upload went on: \(photo)")
                let synced = try await omar.request("msg.sync", ["conversation": photo["data"]?["conversation"] ?? .null])
                #expect(synced["data"]?["messages"]?.arrayValue?.filter { $0["type"] == "image" }.count == 1, "\(synced)")
                var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.server.port)/v1/media/\(upload)")!)
                request.setValue("Bearer \(server.token("omar"))", forHTTPHeaderField: "Authorization")
                let (bytes, _) = try await URLSession.shared.data(for: request)
                let hash = bytes.reduce(UInt32(2_166_136_261)) { ($0 ^ UInt32($1)) &* 16_777_619 }
                #expect(try await huda.run("return sessionStorage.getItem('sent')") == .string("\(bytes.count):\(hash)"))
                // Once sent, nothing is left in the browser to send again.
                try await huda.wait(for: "nothing pending", "return window.majlis.state.pending.length === 0")
                try await huda.run("location.reload()")
                try await huda.wait(for: "the page once more", "return window.majlis?.page.step === 'ready'")
                #expect(try await huda.run("return window.majlis.state.pending.length") == 0)
            }
        }
    }

    /// A page whose session the server ends says why and does not come back by itself: signed in
    /// on another device (one device a user), or signed out by the app's backend.
    @Test func aPageWhoseSessionEndsSaysWhy() async throws {
        try await RealTimeGate.inPairs {
            let server = try TestServer { $0.oneDevicePerUser = true }
            defer { server.destroy() }
            let first = try await Browser(microphone: nil)
            let second = try await Browser(microphone: nil, language: "ja")
            try await Browser.closing([first, second]) {
                try await Self.page(first, server, user: "huda")
                try await Self.page(second, server, user: "huda", language: "ja")
                try await first.wait(for: "the first page told", "return window.majlis.page.step === 'failed'")
                #expect(try await first.run("return document.querySelector('.error').textContent") == "You signed in on another device")
                let revoked = try await ServerAPITests.call(server, "POST", "/v1/users/huda/sessions/revoke", #"{"reason":"パスワード変更"}"#)
                #expect(revoked.status == 200, "\(revoked)")
                try await second.wait(for: "the second page told", "return window.majlis.page.step === 'failed'")
                #expect(try await second.run("return document.querySelector('.error').textContent") == "サインアウトされました：パスワード変更")
                #expect(try await first.run("return window.majlis.page.step") == "failed")
            }
        }
    }

    /// The server is killed (kill -9) and restarted under two pages: each reconnects by itself,
    /// a message written while it was down is sent once it is back, and the other page has it,
    /// once, with its unread mark.
    @Test func thePagesKeepTheirConversationsThroughAServerRestart() async throws {
        try await RealTimeGate.inPairs {
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-messages-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: data) }
            let port = try Browser.freePort()
            var server = try await WebAppFailoverTests.serve(port: port, data: data)
            defer { server.kill() }
            let huda = try await Browser(microphone: nil)
            let omar = try await Browser(microphone: nil)
            try await Browser.closing([huda, omar]) {
                for (browser, name) in [(huda, "Huda"), (omar, "Omar")] {
                    try await browser.open("http://127.0.0.1:\(port)/messages")
                    try await browser.wait(for: "the name form", "return document.querySelector('[data-form=signin]') !== null")
                    try await Self.submit(browser, "signin", ["name": name])
                    try await browser.wait(for: "\(name) signed in", "return window.majlis.page.step === 'ready'")
                }
                let omarId = try #require(try await omar.run("return window.majlis.state.me").stringValue)
                try await Self.submit(huda, "chat", ["to": omarId, "text": "before"])
                try await omar.wait(for: "the first message", "return document.querySelector('.conversation .preview')?.textContent === 'before'")

                server.kill()
                try await huda.wait(for: "Huda's page offline", "return window.majlis.page.offline")
                try await Self.submit(huda, "send", ["text": "written while the server was down"])
                #expect(try await huda.run("return document.querySelector('.message.pending')?.dataset.status") == "sending")
                server = try await WebAppFailoverTests.serve(port: port, data: data)
                try await huda.wait(for: "sent once the server is back", "return document.querySelector('.message.pending') === null && !window.majlis.page.offline", seconds: 60)
                try await omar.wait(
                    for: "the message at Omar", "return document.querySelector('.conversation .preview')?.textContent === 'written while the server was down'", seconds: 60)
                try await omar.wait(for: "two unread", "return document.querySelector('.conversation .badge')?.dataset.unread === '2'")
                try await omar.click("[data-action=open]")
                try await omar.wait(for: "both messages, once each", "return document.querySelectorAll('.message.theirs').length === 2")
                #expect(try await omar.run("return [...document.querySelectorAll('.message.theirs .text')].map((p) => p.textContent)") == ["before", "written while the server was down"])
            }
        }
    }
}
