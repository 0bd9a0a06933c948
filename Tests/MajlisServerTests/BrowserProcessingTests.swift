import Foundation
import MajlisAudio
import MajlisLab
import MajlisTestSupport
import Testing

/// The web app's own processing (the browser's noise suppression, gain and echo cancellation,
/// asked for in getUserMedia) measured as the SDK's is: speech in pink noise at 10 dB SNR into
/// the page's microphone, what a bot in the room hears scored with PESQ-WB against the clean
/// speech, with the processing on and off. (Its echo cancellation is not measured: the fake
/// devices of a headless browser have no path from its speaker to its microphone.)
@Suite(.serialized, .enabled(if: Browser.isAvailable, "needs chromium (scripts/install-deps --test)"))
struct BrowserProcessingTests {
    @Test func theBrowsersNoiseSuppressionIsMeasured() async throws {
        try await RealTimeGate.exclusively {
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-browser-ns-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: work) }
            let speech = try await offPool { Result { try SpeechSample.make(SpeechSample.sentence) } }.get()
            // A second of noise alone before the speech, as a room has before anyone talks.
            let padded = [Int16](repeating: 0, count: 48_000) + speech
            let noisy = SyntheticSound.noisy(padded, snr: 10, seed: 1, noise: nil)
            try WAVFile.write(PCMBuffer(sampleRate: 48_000, channels: 1, int16: noisy), to: "\(work)/noisy.wav")
            var scores: [String: Double] = [:]
            for processing in ["on", "off"] {
                let server = try BrowserTests.server()
                defer { server.destroy() }
                let browser = try await Browser(microphone: "\(work)/noisy.wav")
                let heard = "\(work)/heard-\(processing).wav"
                try await Browser.closing([browser]) {
                    try await BrowserTests.join(browser, server: server, room: "noise", name: "Layla", mode: "free", query: processing == "off" ? "&processing=off" : "")
                    try await browser.click("[data-action=take]")
                    try await browser.wait(for: "Layla seated", "return window.majlis.state.seats[0].user === window.majlis.state.me.id")
                    // Two passes of the looped file and a little more: one whole pass is scored.
                    let bot = try JoinBotTests.Bot(["--url", server.url, "--token", server.token("ear"), "--room", "noise", "--record", heard])
                    try await Task.sleep(for: .seconds(Double(noisy.count) / 48_000 * 2 + 2))
                    bot.interrupt()
                    let end = await bot.finish()
                    #expect(end.status == 0, "\(end.err.suffix(300))")
                }
                let recorded = try WAVFile.read(heard).int16
                try #require(recorded.count > noisy.count * 2)
                // One whole pass of the looped file, wherever it lies.
                let start = SyntheticSound.bestOffset(of: noisy, in: recorded)
                let pass = Array(recorded[(start + 48_000)..<(start + noisy.count)])
                scores[processing] = try await offPool { Result { try PESQJudge.scores(reference: speech, degraded: [pass])[0] } }.get()
            }
            let on = try #require(scores["on"]), off = try #require(scores["off"])
            print(String(format: "the browser's noise suppression: speech in pink noise at 10 dB SNR PESQ-WB %.2f with it off, %.2f on (%+.2f)", off, on, on - off))
            // Chromium 156's suppressor (WebRTC's, in the browser) gained 0.58-0.59 here; ours, 0.47-0.48
            // (`majlis bench audio`).
            #expect(on >= off + 0.2, "the browser's processing on \(on) vs off \(off)")
        }
    }
}
