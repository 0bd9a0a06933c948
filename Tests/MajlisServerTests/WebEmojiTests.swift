import Foundation
import MajlisPacks
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Seat emoji in the room page, in headless Chromium: a seated person picks one from the
/// server's emoji packs, and both pages play it on that seat from the pack, checked by its hash;
/// a gift the backend sends (a Lottie animation, drawn by the page) plays on its receiver's seat,
/// with a note.
@Suite(.enabled(if: Browser.isAvailable, "needs chromium and chromium-driver (scripts/install-deps --test)"))
struct WebEmojiTests {
    /// A 1 x 1 PNG.
    static let png = Array(Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")!)

    /// A Lottie animation: a red disc that swells and shrinks, less a square (a mask) up and to the
    /// left of its centre, and only within the left three quarters of the picture (a track matte),
    /// 100 x 100, a second at 30 frames a second.
    static let rose = """
        {"v": "5.7.0", "w": 100, "h": 100, "fr": 30, "ip": 0, "op": 30, "layers": [{
          "ty": 4, "ind": 2, "td": 1, "ip": 0, "op": 30, "st": 0, "ks": {},
          "shapes": [{"ty": "rc", "p": {"k": [37.5, 50]}, "s": {"k": [75, 100]}, "r": {"k": 0}}, {"ty": "fl", "c": {"k": [1, 1, 1, 1]}, "o": {"k": 100}}]}, {
          "ty": 4, "ind": 1, "tt": 1, "ip": 0, "op": 30, "st": 0,
          "masksProperties": [{"mode": "s", "pt": {"k": {"c": true, "v": [[-40, -40], [-10, -40], [-10, -10], [-40, -10]], "i": [[0, 0], [0, 0], [0, 0], [0, 0]], "o": [[0, 0], [0, 0], [0, 0], [0, 0]]}}}],
          "ks": {"p": {"k": [50, 50]}, "a": {"k": [0, 0]}, "o": {"k": 100},
                 "s": {"a": 1, "k": [{"t": 0, "s": [80, 80], "o": {"x": [0.4], "y": [0]}, "i": {"x": [0.6], "y": [1]}}, {"t": 15, "s": [100, 100]}, {"t": 30, "s": [80, 80]}]}},
          "shapes": [{"ty": "gr", "it": [
            {"ty": "el", "p": {"k": [0, 0]}, "s": {"k": [80, 80]}},
            {"ty": "fl", "c": {"k": [0.9, 0.1, 0.2, 1]}, "o": {"k": 100}},
            {"ty": "tr", "p": {"k": [0, 0]}, "o": {"k": 100}}]}]}]}
        """

    @Test func aSeatedPersonSendsAnEmojiThatBothPagesPlayOnTheSeat() async throws {
        try await RealTimeGate.inPairs {
            let server = try BrowserTests.server()
            defer { server.destroy() }
            let manifest = """
                {"id": "web", "kind": "emoji", "names": {"en": "Web"},
                 "items": [{"id": "wave", "names": {"en": "Wave"}, "format": "frames", "frames": ["wave/1.png", "wave/2.png"], "fps": 4, "duration": 60000},
                           {"id": "heart", "names": {"en": "Heart"}, "format": "lottie", "animation": "heart.json"}]}
                """
            let pack = try PackArchives.zip([
                ("manifest.json", PackArchives.json(manifest)), ("wave/1.png", Self.png), ("wave/2.png", Self.png), ("heart.json", PackArchives.json(Self.rose)),
            ])
            #expect(try await PackTests.call(server, "POST", "/v1/packs", body: pack, token: ServerAPITests.adminToken(server)).status == 201)
            let huda = try await Browser(microphone: nil)
            let omar = try await Browser(microphone: nil, language: "ar")
            try await Browser.closing([huda, omar]) {
                try await BrowserTests.join(huda, server: server, room: "emoji", name: "Huda", mode: "free")
                try await BrowserTests.join(omar, server: server, room: "emoji", name: "Omar")
                try await huda.click("[data-action=take]")
                try await huda.wait(for: "Huda seated", "return document.querySelector('.seat.mine') !== null")
                let seat = try await huda.run("return Number(document.querySelector('.seat.mine').dataset.seat)")
                try await huda.click("[data-action=emojiPicker]")
                // The Lottie item shows its first frame, drawn by the page.
                try await huda.wait(
                    for: "the picker",
                    """
                    const images = [...document.querySelectorAll('.picker [data-action=emoji] img')];
                    return images.length === 2 && images.every((img) => img.complete) && images[1].src.startsWith('data:image/png') && images[1].naturalWidth === 128
                    """)
                try await huda.click(".picker [data-action=emoji]")
                for browser in [huda, omar] {
                    try await browser.wait(
                        for: "the emoji on Huda's seat",
                        """
                        const shown = document.querySelector('.seat[data-seat="\(seat.intValue ?? -1)"] .emoji');
                        const img = shown?.querySelector('img');
                        return shown?.dataset.item === 'wave' && img?.complete && img.naturalWidth === 1
                        """)
                }

                // A gift the backend sends to Huda's seat: played there on both pages, with a note
                // in each page's language (names and item isolated, so that either direction reads right).
                let gifts = """
                    {"id": "gifts", "kind": "gift", "names": {"en": "Gifts"},
                     "items": [{"id": "rose", "names": {"en": "Rose", "ar": "وردة"}, "format": "lottie", "animation": "rose.json", "duration": 60000}]}
                    """
                let giftPack = try PackArchives.zip([("manifest.json", PackArchives.json(gifts)), ("rose.json", PackArchives.json(Self.rose))])
                let admin = ServerAPITests.adminToken(server)
                #expect(try await PackTests.call(server, "POST", "/v1/packs", body: giftPack, token: admin).status == 201)
                let sent = try await GiftTests.api(
                    server, "POST", "/v1/rooms/emoji/gifts",
                    ["from": "sponsor", "index": .int(Int64(seat.intValue ?? -1)), "pack": .string(ResourcePack.sha256(giftPack)), "item": "rose", "count": 3, "key": "g1"],
                    token: admin)
                #expect(sent.status == 200, "\(sent)")
                for (browser, note) in [(huda, "\u{2068}sponsor\u{2069} sent \u{2068}Huda\u{2069} \u{2068}Rose ×3\u{2069}"), (omar, "\u{2068}sponsor\u{2069} أهدى \u{2068}Huda\u{2069} \u{2068}وردة ×3\u{2069}")] {
                    let literal = String(decoding: try JSONEncoder().encode(note), as: UTF8.self)
                    try await browser.wait(
                        for: "the gift on Huda's seat and its note",
                        """
                        const shown = document.querySelector('.seat[data-seat="\(seat.intValue ?? -1)"] .emoji');
                        const notes = [...document.querySelectorAll('.notices p')].map((p) => p.textContent);
                        const canvas = shown?.querySelector('canvas');
                        if (!canvas) return false;
                        const middle = [...canvas.getContext('2d').getImageData(canvas.width / 2, canvas.height / 2, 1, 1).data];
                        const corner = [...canvas.getContext('2d').getImageData(2, 2, 1, 1).data];
                        const masked = [...canvas.getContext('2d').getImageData(40, 40, 1, 1).data];
                        const opposite = [...canvas.getContext('2d').getImageData(88, 88, 1, 1).data];
                        const matted = [...canvas.getContext('2d').getImageData(100, 64, 1, 1).data];
                        return shown.dataset.item === 'rose' && notes.includes(\(literal))
                            && middle[0] > 200 && middle[1] < 60 && middle[3] > 200 && corner[3] === 0 && masked[3] === 0 && opposite[0] > 200 && matted[3] === 0
                        """)
                }
                let shot = try await huda.screenshot()
                try shot.write(to: URL(fileURLWithPath: "/tmp/majlis-gift-lottie.png"))
                print("screenshot of a Lottie gift on a seat: /tmp/majlis-gift-lottie.png (\(shot.count) bytes)")
                // Today's leaderboard under the members.
                try await omar.click("[data-action=tab][data-value=members]")
                try await omar.wait(
                    for: "the gift leaderboard",
                    """
                    const row = (list) => [...document.querySelectorAll(`.leaders .${list} li`)].map((li) => li.textContent.trim());
                    return JSON.stringify(row('givers')) === '["sponsor 3"]' && JSON.stringify(row('receivers')) === '["Huda 3"]'
                    """)
            }
        }
    }
}
