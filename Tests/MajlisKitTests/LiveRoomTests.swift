import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MajlisAudio
import MajlisKit
import MajlisPacks
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// SDK clients against the real server on loopback.
@Suite(.serialized) struct LiveRoomTests {
    func client(_ server: TestServer, _ user: String, grants: Grants = Grants(create: true)) async throws -> LiveSignalingClient {
        var options = LiveSignalingClient.Options()
        options.backoff = [100, 200, 400]
        let client = LiveSignalingClient(url: server.url, token: server.token(user, grants: grants), options: options)
        _ = try await client.connect()
        return client
    }

    /// Waits until the room's state satisfies `condition`.
    func until(_ room: VoiceRoom, timeout: Double = 30, _ condition: @escaping @Sendable (RoomState) -> Bool) async throws -> RoomState {
        let deadline = Date().addingTimeInterval(timeout)
        for await state in await room.states() {
            if condition(state) { return state }
            if Date() > deadline { break }
        }
        throw TestClient.Timeout(description: "room state never matched; last: \(await room.state)")
    }

    /// A backend's call of the server API (JSON, or a pack's bytes): its status.
    func backend(_ server: TestServer, _ method: String, _ path: String, json: JSONValue? = nil, zip: [UInt8]? = nil) async throws -> Int {
        try await Self.call(server, method, path, json: json, zip: zip).status
    }

    /// A backend's call of the server API: its status and the answer's bytes.
    static func call(_ server: TestServer, _ method: String, _ path: String, json: JSONValue? = nil, zip: [UInt8]? = nil) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.server.port)\(path)")!)
        request.httpMethod = method
        let token = server.token("backend", grants: Grants(join: false, admin: true, publish: false, chat: false), name: "Backend")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let json {
            request.httpBody = try JSONEncoder().encode(json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let zip {
            request.httpBody = Data(zip)
            request.setValue("application/zip", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    @Test func aGiftTheBackendSendsArrivesAsAnEventAndLeadsTheBoard() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let gifts = try PackArchives.zip(PackArchives.files(PackArchives.manifest.replacingOccurrences(of: #""kind": "emoji""#, with: #""kind": "gift""#)))
        #expect(try await backend(server, "POST", "/v1/packs", zip: gifts) == 201)
        let host = VoiceRoom(roomId: "salon", signaling: try await client(server, "host"))
        _ = try await host.join(create: RoomSettings(title: "Salon"))
        let events = await host.events()
        let gift: JSONValue = ["from": "shop", "to": "host", "pack": .string(ResourcePack.sha256(gifts)), "item": "heart", "count": 4, "key": "k1"]
        #expect(try await backend(server, "POST", "/v1/rooms/salon/gifts", json: gift) == 200)
        for await event in events {
            guard case .giftSent(let sent) = event else { continue }
            #expect(sent.from == "shop" && sent.to == "host" && sent.item == "heart" && sent.count == 4 && sent.index == nil)
            break
        }
        let leaders = try await host.giftLeaders()
        #expect(leaders == GiftLeaders(givers: [GiftTally(user: "shop", count: 4)], receivers: [GiftTally(user: "host", count: 4)]))
        #expect(try await host.giftLeaders(until: 1).givers.isEmpty)
    }

    @Test func requestToSpeakFlowWithSDKClients() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let hostMedia = RecordingMedia()
        let guestMedia = RecordingMedia()
        let host = VoiceRoom(roomId: "salon", signaling: try await client(server, "host"), media: hostMedia)
        let guest = VoiceRoom(roomId: "salon", signaling: try await client(server, "guest"), media: guestMedia)
        let joined = try await host.join(create: RoomSettings(title: "Salon", seatCount: 6, mode: .request))
        #expect(joined.role == .owner)
        #expect(joined.seats.count == 6)
        try await guest.join()
        _ = try await until(host) { $0.members.contains { $0.id == "guest" } }

        do {
            try await guest.takeSeat(1)
            Issue.record("took a seat in request mode")
        } catch {
            #expect(error.code == .approvalRequired)
        }
        let requestId = try await guest.requestSeat(1)
        let hostView = try await until(host) { $0.requests.contains { $0.id == requestId } }
        #expect(hostView.requests.first?.user == "guest")
        try await host.acceptRequest(requestId)
        let seated = try await until(guest) { $0.mySeat == 1 }
        #expect(seated.myRequest == nil)
        #expect(seated.publishing)
        #expect(await guestMedia.history == [true])

        try await guest.sendChat("salam 👋")
        let chat = try await until(host) { $0.chat.contains { $0.text == "salam 👋" } }
        #expect(chat.chat.last?.from.id == "guest")

        try await host.muteSeat(1, muted: true)
        _ = try await until(guest) { !$0.publishing }
        #expect(await guestMedia.history == [true, false])

        try await guest.leaveSeat()
        try await guest.leave()
        _ = try await until(host) { !$0.members.contains { $0.id == "guest" } }
    }

    @Test func reconnectAfterTheServerRestartsKeepsWorking() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-kit-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server: TestServer? = try TestServer(dataDirectory: directory)
        let port = server!.server.port
        let signaling = try await client(server!, "owner")
        let room = VoiceRoom(roomId: "phoenix", signaling: signaling)
        try await room.join(create: RoomSettings(title: "Phoenix"))
        try await room.sendChat("before")
        try await room.takeSeat(2)
        try await room.setMic(on: true)
        _ = try await until(room) { $0.mySeat == 2 && $0.seats[2].micOn }
        server!.stop()
        _ = try await until(room) { $0.status == .reconnecting }
        server = try TestServer(dataDirectory: directory, secret: server!.secret) { $0.port = port }
        defer { server?.destroy() }
        let back = try await until(room, timeout: 20) { $0.status == .joined && $0.chat.contains { $0.text == "before" } }
        #expect(back.role == .owner)
        // Its seat and microphone are taken again by themselves.
        _ = try await until(room, timeout: 20) { $0.mySeat == 2 && $0.seats[2].micOn }
        try await room.sendChat("after")
        _ = try await until(room) { $0.chat.contains { $0.text == "after" } }
    }

    @Test func kickedUserSeesItAndStopsPublishing() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let owner = VoiceRoom(roomId: "k", signaling: try await client(server, "owner"))
        try await owner.join(create: RoomSettings())
        let media = RecordingMedia()
        let guest = VoiceRoom(roomId: "k", signaling: try await client(server, "guest"), media: media)
        try await guest.join()
        try await guest.takeSeat()
        _ = try await until(guest) { $0.publishing }
        try await owner.kick("guest", banSeconds: 60)
        let kicked = try await until(guest) { if case .kicked = $0.status { return true } else { return false } }
        guard case .kicked(let by, let until) = kicked.status else { return }
        #expect(by == "owner")
        #expect(until != nil)
        #expect(!kicked.publishing)
        #expect(await media.stopped)
    }

    /// Waits (bounded) until the last 200 ms of `sink` satisfy `condition` on their level in dBov.
    func heard(_ sink: RecordingSink, _ condition: @escaping (Double) -> Bool) async throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let samples = sink.recorded
            if samples.count >= 9_600, condition(LevelMeter.dBov(Array(samples.suffix(9_600)))) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestClient.Timeout(description: "the recording never matched (last level \(LevelMeter.dBov(Array(sink.recorded.suffix(9_600)))) dBov)")
    }

    @Test func liveMediaEngineSpeaksAndHearsWithVolumeAndRemoteMute() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let speakerMedia = try LiveMediaEngine(source: ToneSource(frequency: 600), sink: NullSink())
        let recorder = RecordingSink()
        let listenerMedia = try LiveMediaEngine(source: SilenceSource(), sink: recorder)
        let speaker = VoiceRoom(roomId: "live", signaling: try await client(server, "singer"), media: speakerMedia)
        let listener = VoiceRoom(roomId: "live", signaling: try await client(server, "ear"), media: listenerMedia)
        try await speaker.join(create: RoomSettings())
        try await listener.join()
        try await speaker.takeSeat(0)
        try await heard(recorder) { $0 > -25 }
        #expect(ToneDetector.strongest(of: [300, 600, 1_200], in: Array(recorder.recorded.suffix(9_600))) == 600)
        _ = try await until(listener) { $0.seats[0].ssrc != nil }
        try await listener.muteRemote("singer", muted: true)
        try await heard(recorder) { $0 < -60 }
        try await listener.muteRemote("singer", muted: false)
        try await heard(recorder) { $0 > -25 }
        await listener.setPlaybackVolume(0)
        try await heard(recorder) { $0 < -60 }
        await listener.setPlaybackVolume(100)
        await speaker.setCaptureVolume(0)
        try await heard(recorder) { $0 < -60 }
        await speakerMedia.stop()
        await listenerMedia.stop()
    }

    /// A speaker whose device is too slow for its ticks (a microphone that takes 30 ms to hand
    /// out each 20 ms frame, as heavy processing in a debug build does) still plays what arrives: the engine
    /// takes in what the socket holds before every late tick, and does not run late ticks back to
    /// back for ever.
    @Test func aSpeakerWhoseTicksRunLateStillHears() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let speakerMedia = try LiveMediaEngine(source: ToneSource(frequency: 600), sink: NullSink())
        let recorder = RecordingSink()
        let listenerMedia = try LiveMediaEngine(source: SlowSource(), sink: recorder)
        let speaker = VoiceRoom(roomId: "late", signaling: try await client(server, "singer"), media: speakerMedia)
        let listener = VoiceRoom(roomId: "late", signaling: try await client(server, "ear"), media: listenerMedia)
        try await speaker.join(create: RoomSettings())
        try await listener.join()
        try await speaker.takeSeat(0)
        try await listener.takeSeat(1)  // a seated client reads its microphone every tick
        try await heard(recorder) { $0 > -25 }
        #expect(ToneDetector.strongest(of: [300, 600, 1_200], in: Array(recorder.recorded.suffix(9_600))) == 600)
        await speakerMedia.stop()
        await listenerMedia.stop()
    }
}

/// A live microphone that takes 30 ms to hand out each 20 ms frame of silence.
private final class SlowSource: AudioSource, Sendable {
    func nextFrame() -> [Int16] {
        Thread.sleep(forTimeInterval: 0.03)
        return [Int16](repeating: 0, count: AudioFormat.frameSamples)
    }
}
