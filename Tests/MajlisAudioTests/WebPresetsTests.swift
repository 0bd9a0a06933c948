import Foundation
import MajlisAudio
import Testing

/// The web app's voice effects are the SDK's: `Web/app/presets.js` is what `WebPresets` makes
/// from the presets and the stages' constants. Run with MAJLIS_WRITE_WEB_PRESETS=1 to write it.
struct WebPresetsTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Web/app/presets.js").standardizedFileURL

    @Test func theWebAppsPresetsAreTheSDKs() throws {
        let made = WebPresets.module()
        if ProcessInfo.processInfo.environment["MAJLIS_WRITE_WEB_PRESETS"] == "1" {
            try made.write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let written = try String(contentsOf: Self.file, encoding: .utf8)
        #expect(written == made, "Web/app/presets.js differs from the SDK's presets: MAJLIS_WRITE_WEB_PRESETS=1 swift test --filter WebPresetsTests writes it")
    }
}
