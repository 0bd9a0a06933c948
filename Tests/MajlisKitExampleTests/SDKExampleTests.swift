import Foundation
import MajlisKit
import Testing

/// docs/sdk.md's examples, compiled as an app compiles them: this target depends on MajlisKit
/// alone and imports nothing else of Majlis. A test keeps the page and this file the same.
@Suite struct SDKExampleTests {
    // What the examples leave to the app.
    static let token = "a token from the app's backend"
    static let myMediaEngine = NullMediaEngine()
    static func render(_ model: RoomViewModel) {}
    static func playGiftAnimation(from: String, type: String, payload: JSONValue) {}
    static func notify(_ message: ChatMessage) {}

    /// "In your package": the app's main.swift (compiled; it needs a server to run).
    static func aCompleteApp() async throws {
        let environment = ProcessInfo.processInfo.environment
        let url = environment["MAJLIS_URL"] ?? "ws://127.0.0.1:7880/v1/signal"
        guard let appToken = environment["MAJLIS_TOKEN"] else {
            print("set MAJLIS_TOKEN to a token from your backend (or from `majlis token`)")
            exit(1)
        }
        let client = LiveSignalingClient(url: url, token: appToken)
        _ = try await client.connect()
        let majlis = VoiceRoom(roomId: environment["MAJLIS_ROOM"] ?? "majlis", signaling: client, media: NullMediaEngine())
        try await majlis.join()
        let presenter = VoiceRoomPresenter(language: .english)
        for await state in await majlis.states() {
            let view = presenter.present(state)
            print(view.title, view.seats.map { "\($0.index + 1): \($0.title)" }.joined(separator: ", "))
        }
    }

    /// "Conversations" (compiled; it needs a server to run).
    static func conversations(url: String, installID: String, groupId: String, appSupport: String, photoPath: String, thumbPath: String) async throws {
        var options = LiveSignalingClient.Options()
        options.device = installID
        let signaling = LiveSignalingClient(url: url, token: token, options: options)
        _ = try await signaling.connect()
        let messenger = Messenger(signaling: signaling, store: FileMessengerStore(path: appSupport + "/conversations.json"),
                                  transfer: HTTPMediaTransfer(signaling: signaling))
        try await messenger.start()               // lists the conversations and syncs each
        for await state in await messenger.states() {
            // state.ordered: the list (pinned first, newest first), state.unread: the badge,
            // state.messages[id]: a conversation's messages without gaps, state.pending: what is
            // being sent, state.typing(in: id, now:): who types
            _ = state
        }
        try await messenger.send(text: "See you tonight", to: .user("omar"))
        try await messenger.send(MessageDraft(type: "room_invite", text: nil, payload: ["room": "salon"],
                                              fallback: "Join my room: salon", clientMsgId: UUID().uuidString),
                                 to: .conversation(groupId))
        let photo = try await messenger.send(file: photoPath, type: "image/jpeg", to: .conversation(groupId),
                                             thumbnail: (thumbPath, "image/jpeg"), details: ["width": 1280, "height": 960])
        let bytes = try await messenger.download(photo?.payload?["media"]?.stringValue ?? "") // a message's file
        _ = bytes
        try await messenger.markRead(groupId)
        let found = try await messenger.search("salon")   // newest first; found.next: the next page
        let groups = try await messenger.discover("hiking") // public groups, the largest first
        try await messenger.join(groups.groups[0].id)       // false: asked; the owner answers
        try await messenger.presence(of: ["omar"])         // contacts online; state.presence keeps it current
        try await messenger.sharePresence(.nobody)          // or .contacts (the default)
        _ = found
    }

    /// "Seat emoji and resource packs" (compiled; it needs a server to run).
    static func seatEmoji(signaling: LiveSignalingClient, room: VoiceRoom, cachesPath: String, pack: String) async throws {
        let packs = PackCache(directory: cachesPath + "/packs", source: HTTPPackSource(signaling: signaling))
        let catalogue = try await packs.catalogue()                       // the server's current packs
        if let pack = catalogue.emojiPack(with: "laugh") {
            try await room.sendEmoji(toSeat: 2, pack: pack.sha256, item: "laugh")
        }
        // On RoomEvent.seatEmoji(index, user, pack, item): the item's files, fetched once, then from the device
        let manifest = try await packs.manifest(of: pack)
        let file = try await packs.path(of: manifest.items[0].animation ?? "", in: pack)
        _ = file
    }

    /// "Joining a room" (compiled; it needs a server to run).
    static func joiningARoom() async throws {
        let signaling = LiveSignalingClient(url: "ws://127.0.0.1:7880/v1/signal", token: token)
        _ = try await signaling.connect()
        let room = VoiceRoom(roomId: "majlis", signaling: signaling, media: myMediaEngine)
        try await room.join(create: RoomSettings(title: "Evening majlis", mode: .request))

        Task {
            for await state in await room.states() {    // the newest state: seats, members, chat, status...
                render(VoiceRoomPresenter(language: .arabic).present(state))
            }
        }
        for await event in await room.events() {        // what changed, one event each, none lost
            switch event {
            case .signal(let from, let type, let payload):
                playGiftAnimation(from: from, type: type, payload: payload)
            case .chatReceived(let message):
                notify(message)
            default:
                break
            }
        }
    }

    /// "Sound: clean-up, effects and checks before joining" (compiled; it needs a server to run).
    static func soundAndChecks(room: VoiceRoom, signaling: LiveSignalingClient, media: LiveMediaEngine, recognizer: any AudioTap) async throws {
        await room.setVoiceProcessing(.standard)                          // echo, noise, gain
        await room.setVoiceEffect(VoiceEffect.Preset.ktv.effect)         // a karaoke room's reverb
        await room.setVoiceEffect(VoiceEffect(pitch: -3, equalizer: [0, 2, 3, 0, 0, 0, 0, 0, -2, -4]))

        let music = try MusicTrack(path: "evening.mp3")                  // WAV, FLAC, Ogg Opus or Vorbis, MP3
        media.play(music, loops: 0, destination: .room)                  // the room hears it too, until stopped
        music.setVolumes(send: 60, local: 100)                           // quieter for the room than here
        media.setInEarMonitoring(volume: 80)                             // one's own voice, on headphones
        try await room.setMemberVolume("omar", volume: 150)              // one member louder, here only
        await room.setSpatialSound(true)                                 // each seat in its place, for headphones
        media.setTap(try FormattedTap(recognizer, sampleRate: 16_000, channels: 1, readOnly: true), at: .recording)  // the app's own speech recognizer, at 16 kHz

        let report = try await NetworkProbe.run(signaling: signaling, up: 500_000, down: 500_000)
        print(report.quality, report.uplink.bandwidth, report.downlink.loss, report.roundTrip ?? 0)

        let echo = EchoTest(signaling: signaling, media: media)          // before joining
        try await echo.start(delay: .seconds(3))                         // speak: heard back 3 s later
        try await Task.sleep(for: .seconds(10))
        await echo.stop()
    }

    /// "Testing an app's logic", run.
    @Test func testingAnAppsLogic() async throws {
        let snapshotJSON = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(RoomSnapshot(
            room: RoomInfo(id: "r", title: "Room", owner: "me", mode: .free, seatCount: 2, announcement: "", chatMutedAll: false, createdAt: 1, memberCount: 1, maxMembers: 0),
            seq: 5, seats: [Seat(index: 0), Seat(index: 1)],
            members: [Member(id: "me", name: "Me", avatar: "", role: .owner, seat: nil, chatMuted: false, joinedAt: 1)],
            attributes: [:], me: SelfState(role: .owner, seat: nil, chatMuted: false, request: nil), requests: [], chat: .init(lastMsgId: 0))))

        let fake = FakeSignalingClient(user: "me") { op, args in
            op == "room.join" ? .success(snapshotJSON) : .success([:])
        }
        let room = VoiceRoom(roomId: "r", signaling: fake, clock: ManualClock())
        try await room.join()
        fake.emit(.seatUpdated([Seat(index: 0, state: .occupied, user: "me", muted: false, micOn: true)]), room: "r", seq: 6)

        for await state in await room.states() where state.seats.first?.user == "me" { break }
        #expect(await room.state.mayPublish)
    }

    /// Every Swift block of docs/sdk.md stands in this file, line for line.
    @Test func thePageShowsWhatCompiles() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/sdk.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let lines = Set(source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        let blocks = page.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count >= 2)
        for block in blocks {
            for line in block.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).isEmpty && !line.contains("import MajlisKit") {
                #expect(lines.contains(line.trimmingCharacters(in: .whitespaces)), "docs/sdk.md line not compiled here: \(line)")
            }
        }
    }
}
