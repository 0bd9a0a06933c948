import MajlisKit
import MajlisProtocol
import Testing

/// The echo test comes back when the user asked: the delay asked of the server leaves out what
/// the client's own devices hold.
@Suite struct EchoTestTests {
    final class DeviceMedia: MediaEngine {
        let deviceLatency: Double
        init(deviceLatency: Double) { self.deviceLatency = deviceLatency }
        func setPublishing(_ publishing: Bool) async {}
        func stop() async {}
    }

    @Test func theServerIsAskedForTheDelayLessTheDevicesLatency() async throws {
        let signaling = FakeSignalingClient()
        try await EchoTest(signaling: signaling, media: DeviceMedia(deviceLatency: 60.4)).start(delay: .seconds(3))
        #expect(signaling.lastArgs(of: "echo.start")?["delay"] == .int(2_940))
        try await EchoTest(signaling: signaling, media: NullMediaEngine()).start(delay: .seconds(2))
        #expect(signaling.lastArgs(of: "echo.start")?["delay"] == .int(2_000))
        await #expect(throws: MajlisError.self) { try await EchoTest(signaling: signaling, media: NullMediaEngine()).start(delay: .seconds(1)) }
    }
}
