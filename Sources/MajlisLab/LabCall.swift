#if os(Linux)
import Foundation
import MajlisAudio
import MajlisKit
import MajlisProtocol
import MajlisTransport

/// A speaker and a listener in one room of a `LabServer`, each the SDK's `VoiceRoom` with a
/// `LiveMediaEngine`: the speaker seated with `source` as its microphone, the listener playing
/// into `sink`.
public final class LabCall: Sendable {
    public let speaker: VoiceRoom
    public let listener: VoiceRoom
    public let speakerMedia: LiveMediaEngine
    public let listenerMedia: LiveMediaEngine

    /// `speakerURL` points the speaker's signaling elsewhere (a relay in front of the server).
    public init(server: LabServer, room: String = "lab", source: any AudioSource, sink: any AudioSink, speakerURL: String? = nil) async throws {
        speakerMedia = try LiveMediaEngine(source: source, sink: NullSink())
        listenerMedia = try LiveMediaEngine(source: SilenceSource(), sink: sink)
        func join(_ user: String, _ media: LiveMediaEngine, create: Bool, url: String = server.url) async throws -> VoiceRoom {
            let signaling = LiveSignalingClient(url: url, token: server.token(user))
            _ = try await signaling.connect()
            let voiceRoom = VoiceRoom(roomId: room, signaling: signaling, media: media)
            _ = try await voiceRoom.join(create: create ? RoomSettings() : nil)
            return voiceRoom
        }
        speaker = try await join("speaker", speakerMedia, create: true, url: speakerURL ?? server.url)
        listener = try await join("listener", listenerMedia, create: false)
        try await speaker.takeSeat(0)
        let deadline = Date().addingTimeInterval(30)
        while !(speakerMedia.isBound && listenerMedia.isBound) && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
    }

    /// Stops both media engines and leaves.
    public func end() async {
        await speakerMedia.stop()
        await listenerMedia.stop()
        try? await speaker.leave()
        try? await listener.leave()
    }
}
#endif
