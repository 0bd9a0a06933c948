import MajlisProtocol

/// The echo test (docs/protocol.md section 15): the user speaks and hears, through the real
/// media path, what the server heard, `delay` later; before joining a room or without one. It
/// uses the media engine of the room to come (its microphone, processing and speaker), so stop
/// it before joining.
public final class EchoTest: Sendable {
    private let signaling: any SignalingClient
    private let media: any MediaEngine

    public init(signaling: any SignalingClient, media: any MediaEngine) {
        self.signaling = signaling
        self.media = media
    }

    /// Starts (or starts again) the test: from now on what the microphone hears comes back after
    /// `delay` (2 to 10 seconds), for a minute at most. The signaling client must be connected.
    public func start(delay: Duration = .seconds(3)) async throws(MajlisError) {
        let milliseconds = Int(delay.milliseconds)
        guard (2_000...10_000).contains(milliseconds) else { throw MajlisError.misuse("the echo test's delay is 2 to 10 seconds") }
        // What the user hears comes the devices' buffers later than the server sends it back
        // (through a sound server 75-140 ms): those are asked for less.
        let asked = max(1_000, milliseconds - Int(media.deviceLatency.rounded()))
        let answer = try await signaling.request("echo.start", ["delay": .int(Int64(asked))])
        await media.configure(answer["media"])
        await media.setPublishing(true)
    }

    /// Ends the test: the microphone stops, and the server forgets it.
    public func stop() async {
        await media.setPublishing(false)
        await media.stop()
        _ = try? await signaling.request("echo.stop", [:])
    }
}
