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

    /// `speakerURL` points the speaker's signaling elsewhere (a relay in front of the server);
    /// `profile` is the speaker's encoder profile.
    /// Returns once both ends are bound; or, `cold`, as soon as the speaker is seated: the
    /// listener is in the room first (bound), and the speaker joins and takes its seat after it,
    /// its path still being set up (a recording it plays waits for that).
    public init(
        server: LabServer, room: String = "lab", source: any AudioSource, sink: any AudioSink, speakerURL: String? = nil, cold: Bool = false,
        profile: AudioProfile = .speech
    ) async throws {
        speakerMedia = try LiveMediaEngine(source: source, sink: NullSink(), profile: profile)
        listenerMedia = try LiveMediaEngine(source: SilenceSource(), sink: sink)
        func join(_ user: String, _ media: LiveMediaEngine, create: Bool, url: String = server.url) async throws -> VoiceRoom {
            let signaling = LiveSignalingClient(url: url, token: server.token(user))
            _ = try await signaling.connect()
            let voiceRoom = VoiceRoom(roomId: room, signaling: signaling, media: media)
            _ = try await voiceRoom.join(create: create ? RoomSettings() : nil)
            return voiceRoom
        }
        func bound(_ engines: [LiveMediaEngine]) async throws {
            let deadline = Date().addingTimeInterval(30)
            while !engines.allSatisfy(\.isBound) && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        }
        if cold {
            listener = try await join("listener", listenerMedia, create: true)
            try await bound([listenerMedia])
            speaker = try await join("speaker", speakerMedia, create: false, url: speakerURL ?? server.url)
            try await speaker.takeSeat(0)
        } else {
            speaker = try await join("speaker", speakerMedia, create: true, url: speakerURL ?? server.url)
            listener = try await join("listener", listenerMedia, create: false)
            try await speaker.takeSeat(0)
            try await bound([speakerMedia, listenerMedia])
        }
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
