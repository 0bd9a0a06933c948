import Foundation
import MajlisTestSupport
import Testing

struct ZZShot {
    @Test(arguments: ["en", "ar"]) func shots(language: String) async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-shot-\(UUID().uuidString)").path
        let port = try Browser.freePort()
        var server = try WebAppFailoverTests.serve(port: port, data: data)
        defer { server.kill() }
        let browser = try await Browser(microphone: nil, width: 360, height: 740, language: language)
        try await Browser.closing([browser]) {
            try await BrowserTests.join(browser, page: "http://127.0.0.1:\(port)", room: "stage", name: "Huda", mode: "free")
            try await browser.click("[data-action=take]")
            try await browser.wait(for: "seated", "return window.majlis.state.seats[0].user === window.majlis.state.me.id")
            server.kill()
            try await browser.wait(for: "banner", "return window.majlis.page.banner === 'reconnecting'")
            try await Task.sleep(for: .milliseconds(500))
            try await browser.screenshot().write(to: URL(fileURLWithPath: "/tmp/shot-\(language)-1-reconnecting.png"))
            try await WebAppFailoverTests.sendChat(browser, "hello?")
            try await Task.sleep(for: .seconds(17))
            try await browser.screenshot().write(to: URL(fileURLWithPath: "/tmp/shot-\(language)-2-notsent.png"))
            server = try WebAppFailoverTests.serve(port: port, data: data)
            try await WebAppFailoverTests.settled(browser, seat: 0)
            try await browser.click("[data-form=chat] button")
            try await Task.sleep(for: .seconds(2))
            try await browser.screenshot().write(to: URL(fileURLWithPath: "/tmp/shot-\(language)-3-back.png"))
            print(try await browser.run("return window.majlis.page.log.join('\\n')"))
        }
    }
}
