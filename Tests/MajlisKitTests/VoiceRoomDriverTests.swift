import Foundation
import MajlisKit
import MajlisProtocol
import Synchronization
import Testing

/// VoiceRoom on the fake signaling client: no server, no sleeps.
@Suite struct VoiceRoomDriverTests {
    static func snapshot(seq: Int64, mode: RoomMode = .free, seats: [Seat]? = nil, role: Role = .member, owner: String = "host", members: [String] = ["host", "me"]) -> JSONValue {
        let seatList = seats ?? (0..<4).map { Seat(index: $0) }
        let value = RoomSnapshot(
            room: RoomInfo(id: "r", title: "Room", owner: owner, mode: mode, seatCount: seatList.count, announcement: "", chatMutedAll: false, createdAt: 1, memberCount: members.count, maxMembers: 0),
            seq: seq, seats: seatList,
            members: members.map { Member(id: $0, name: $0.capitalized, avatar: "", role: $0 == owner ? .owner : .member, seat: nil, chatMuted: false, joinedAt: 1) },
            attributes: [:], me: SelfState(role: role, seat: nil, chatMuted: false, request: nil), requests: [], chat: .init(lastMsgId: 0))
        return try! JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }

    static func server(_ snapshot: @escaping @Sendable () -> JSONValue) -> FakeSignalingClient.Responder {
        { op, _ in
            switch op {
            case "room.join", "room.sync": return .success(snapshot())
            case "chat.history": return .success(["messages": []])
            case "request.create": return .success(["requestId": "q1"])
            case "chat.send": return .success(["msgId": 9, "ts": 1])
            default: return .success([:])
            }
        }
    }

    /// Waits for a state that satisfies `condition` (the timeout only guards against a hang: it
    /// is long, as the whole suite's tasks may wait while another test starts PostgreSQL).
    func until(_ room: VoiceRoom, _ condition: @escaping @Sendable (RoomState) -> Bool) async throws -> RoomState {
        let deadline = Date().addingTimeInterval(120)
        for await state in await room.states() {
            if condition(state) { return state }
            if Date() > deadline { break }
        }
        Issue.record("state never matched: \(await room.state)")
        return await room.state
    }

    func seat(_ index: Int, _ user: String?, muted: Bool = false, micOn: Bool = true) -> Seat {
        Seat(index: index, state: user == nil ? .empty : .occupied, user: user, muted: muted, micOn: user == nil ? false : micOn)
    }

    /// Refused because another node of the cluster hosts the room, a join moves there and joins;
    /// where that node cannot be reached (it died), it asks its own node again until the room
    /// has been opened there.
    @Test func aJoinFollowsItsRoomToTheNodeThatHostsIt() async throws {
        let signaling = FakeSignalingClient()
        let snapshot = Self.snapshot(seq: 3)
        let hostedOnB = ProtocolError(.conflict, "room r is hosted on node b", host: .init(node: "b", signaling: "ws://b/v1/signal"))
        signaling.respond { [signaling] op, _ in
            guard op == "room.join", signaling.currentURL != "ws://b/v1/signal" else { return Self.server { snapshot }(op, [:]) }
            return .failure(hostedOnB)
        }
        let room = VoiceRoom(roomId: "r", signaling: signaling)
        let joined = try await room.join()
        #expect(joined.status == .joined && signaling.moves == ["ws://b/v1/signal"])

        let stranded = FakeSignalingClient()
        stranded.makeUnreachable(["ws://dead/v1/signal"])
        let refusals = Mutex(2)
        stranded.respond { op, _ in
            guard op == "room.join", refusals.withLock({ left in defer { left -= 1 }; return left > 0 }) else { return Self.server { snapshot }(op, [:]) }
            return .failure(ProtocolError(.conflict, "room r is hosted on node dead", host: .init(node: "dead", signaling: "ws://dead/v1/signal")))
        }
        let again = try await VoiceRoom(roomId: "r", signaling: stranded).join()
        #expect(again.status == .joined)
        #expect(stranded.moves == ["ws://dead/v1/signal"], "an unreachable node is tried once")
        #expect(stranded.ops.filter { $0 == "room.join" }.count == 3)
    }

    @Test func requestToSpeakDrivesPublishing() async throws {
        let fake = FakeSignalingClient(user: "me", respond: Self.server { Self.snapshot(seq: 5, mode: .request) })
        let media = RecordingMedia()
        let room = VoiceRoom(roomId: "r", signaling: fake, media: media, clock: ManualClock())
        let joined = try await room.join()
        #expect(joined.status == .joined && joined.seq == 5 && joined.me == "me")
        #expect(fake.ops == ["room.join", "chat.history"])

        let requestId = try await room.requestSeat(2)
        #expect(requestId == "q1")
        #expect(await room.state.myRequest?.index == 2)
        fake.emit(.requestAccepted(requestId: "q1", index: 2), room: "r")
        fake.emit(.requestCancelled(requestId: "q1", user: "me", reason: "accepted"), room: "r")
        fake.emit(.seatUpdated([seat(2, "me")]), room: "r", seq: 6)
        let seated = try await until(room) { $0.mySeat == 2 }
        #expect(seated.myRequest == nil && seated.publishing && seated.seq == 6)
        #expect(await media.history == [true])

        fake.emit(.seatUpdated([seat(2, "me", muted: true)]), room: "r", seq: 7)
        _ = try await until(room) { !$0.publishing }
        fake.emit(.seatUpdated([seat(2, "me", micOn: true)]), room: "r", seq: 8)
        _ = try await until(room) { $0.publishing }
        fake.emit(.seatUpdated([seat(2, nil)]), room: "r", seq: 9)
        let left = try await until(room) { $0.mySeat == nil }
        #expect(!left.publishing)
        #expect(await media.history == [true, false, true, false])
    }

    @Test func theRequestToSpeakShowsEachOfItsStates() async throws {
        let fake = FakeSignalingClient(user: "me", respond: Self.server { Self.snapshot(seq: 5, mode: .request) })
        let room = VoiceRoom(roomId: "r", signaling: fake, clock: ManualClock())
        try await room.join()
        #expect(await room.state.requestStatus == nil)
        try await room.requestSeat()
        #expect(await room.state.requestStatus == .pending)
        // Another member's answer changes nothing here.
        fake.emit(.requestRejected(requestId: "someone-else"), room: "r")
        fake.emit(.requestRejected(requestId: "q1"), room: "r")
        #expect(try await until(room) { $0.requestStatus == .rejected }.myRequest == nil)
        try await room.requestSeat()
        try await room.cancelRequest()
        #expect(await room.state.requestStatus == .cancelled)
        try await room.requestSeat()
        fake.emit(.requestCancelled(requestId: "q1", user: "me", reason: "expired"), room: "r")
        _ = try await until(room) { $0.requestStatus == .expired }
        try await room.requestSeat()
        fake.emit(.requestAccepted(requestId: "q1", index: 3), room: "r")
        _ = try await until(room) { $0.requestStatus == .accepted(index: 3) }
    }

    @Test func joinsAndLeavesBecomeNoticesWithTheNameTheyHad() async throws {
        let clock = ManualClock(now: 1_800_000_000_000)
        let fake = FakeSignalingClient(user: "me", respond: Self.server { Self.snapshot(seq: 5) })
        let room = VoiceRoom(roomId: "r", signaling: fake, clock: clock)
        try await room.join()
        fake.emit(.memberJoined(Member(id: "sara", name: "سارة", avatar: "", role: .member, seat: nil, chatMuted: false, joinedAt: 2)), room: "r", seq: 6)
        _ = try await until(room) { $0.notices.count == 1 }
        clock.advance(by: 60_000)
        fake.emit(.memberLeft(user: "sara", reason: "kicked"), room: "r", seq: 7)
        let state = try await until(room) { $0.notices.count == 2 }
        #expect(state.notices == [
            RoomNotice(kind: .joined, user: "sara", name: "سارة", at: 1_800_000_000_000),
            RoomNotice(kind: .left(reason: "kicked"), user: "sara", name: "سارة", at: 1_800_000_060_000),
        ])
    }

    @Test func eventsFollowTheStateOneChangeEachInOrder() async throws {
        let fake = FakeSignalingClient(user: "me", respond: Self.server { Self.snapshot(seq: 5, mode: .request) })
        let room = VoiceRoom(roomId: "r", signaling: fake, clock: ManualClock())
        let events = await room.events()
        try await room.join()
        let sara = Member(id: "sara", name: "Sara", avatar: "", role: .member, seat: nil, chatMuted: false, joinedAt: 2)
        fake.emit(.memberJoined(sara), room: "r", seq: 6)
        fake.emit(.seatUpdated([seat(1, "sara")]), room: "r", seq: 7)
        fake.emit(.signal(from: "sara", type: "gift", payload: ["rose": 3]), room: "r")
        let gift = Gift(from: "shop", fromName: "shop", to: "sara", index: 1, pack: String(repeating: "ab", count: 32), item: "rose", count: 3, ts: 8)
        fake.emit(.giftSent(gift), room: "r")
        let message = ChatMessage(msgId: 1, from: UserRef(id: "sara", name: "Sara"), type: "text", text: "سلام", payload: nil, ts: 9)
        fake.emit(.chatMessage(message), room: "r", seq: 8)
        fake.emit(.memberLeft(user: "sara", reason: "left"), room: "r", seq: 9)
        var seen: [RoomEvent] = []
        for await event in events {
            seen.append(event)
            if case .memberLeft = event { break }
        }
        var seated = sara
        seated.seat = 1
        #expect(seen == [
            .statusChanged(.joining), .statusChanged(.joined), .roomChanged(try JSONValueDecoder().decode(RoomSnapshot.self, from: Self.snapshot(seq: 5, mode: .request)).room),
            .memberJoined(sara), .seatChanged(seat(1, "sara")),
            .signal(from: "sara", type: "gift", payload: ["rose": 3]), .giftSent(gift), .chatReceived(message), .memberLeft(seated),
        ])
    }

    @Test func aReaderThatFallsBehindIsToldHowManyEventsItMissed() async throws {
        let fake = FakeSignalingClient(user: "me", respond: Self.server { Self.snapshot(seq: 5) })
        let room = VoiceRoom(roomId: "r", signaling: fake, clock: ManualClock())
        try await room.join()
        let events = await room.events()  // not read until all has happened
        let total = VoiceRoom.eventBuffer + 76
        for id in 1...Int64(total) {
            fake.emit(.chatMessage(ChatMessage(msgId: id, from: UserRef(id: "a", name: "A"), type: "text", text: "\(id)", payload: nil, ts: id)), room: "r", seq: 5 + id)
        }
        _ = try await until(room) { $0.lastMsgId == Int64(total) }
        fake.emit(.chatMessage(ChatMessage(msgId: Int64(total) + 1, from: UserRef(id: "a", name: "A"), type: "text", text: "last", payload: nil, ts: 0)), room: "r", seq: 5 + Int64(total) + 1)
        var seen: [RoomEvent] = []
        for await event in events {
            seen.append(event)
            if case .chatReceived(let message) = event, message.text == "last" { break }
            // The missed count comes only after the reader made room, with the next event.
            if seen.count == VoiceRoom.eventBuffer { _ = try await until(room) { $0.lastMsgId == Int64(total) + 1 } }
        }
        #expect(seen.count == VoiceRoom.eventBuffer + 2)
        #expect(seen[VoiceRoom.eventBuffer] == .missed(76))
    }

    @Test func aSeqGapResyncsAndOldEventsAreIgnored() async throws {
        let current = Locked(Self.snapshot(seq: 5))
        let fake = FakeSignalingClient(user: "me", respond: Self.server { current.value })
        let room = VoiceRoom(roomId: "r", signaling: fake, clock: ManualClock())
        try await room.join()
        // An event already included in the snapshot changes nothing.
        fake.emit(.seatUpdated([seat(0, "ghost")]), room: "r", seq: 5)
        // The server moved on to seq 9; we see only 8 and 9.
        current.value = Self.snapshot(seq: 9, seats: [seat(0, "host"), seat(1, nil), seat(2, nil), seat(3, nil)])
        fake.emit(.seatUpdated([seat(1, "x")]), room: "r", seq: 8)
        let synced = try await until(room) { $0.seq == 9 }
        #expect(fake.ops.filter { $0 == "room.sync" }.count == 1)
        #expect(synced.seats[0].user == "host")
        #expect(synced.seats[1].user == nil)
        fake.emit(.seatUpdated([seat(3, "me")]), room: "r", seq: 10)
        let next = try await until(room) { $0.seq == 10 }
        #expect(next.mySeat == 3)
    }

    @Test func eventsDuringTheJoinAreAppliedAfterItsSnapshot() async throws {
        let fake = FakeSignalingClient(user: "me")
        fake.respond { op, _ in
            if op == "room.join" {
                // The server answers, and the next event is already on its way.
                fake.emit(.memberJoined(Member(id: "late", name: "Late", avatar: "", role: .member, seat: nil, chatMuted: false, joinedAt: 2)), room: "r", seq: 6)
                return .success(Self.snapshot(seq: 5))
            }
            return .success(["messages": []])
        }
        let room = VoiceRoom(roomId: "r", signaling: fake, clock: ManualClock())
        try await room.join()
        let state = try await until(room) { $0.seq == 6 }
        #expect(state.members.map(\.id) == ["host", "me", "late"])
        #expect(state.memberCount == 3)
        #expect(!fake.ops.contains("room.sync"))
    }

    @Test func kickedAndEnded() async throws {
        let fake = FakeSignalingClient(user: "me", respond: Self.server { Self.snapshot(seq: 1) })
        let media = RecordingMedia()
        let room = VoiceRoom(roomId: "r", signaling: fake, media: media, clock: ManualClock())
        try await room.join()
        fake.emit(.youKicked(by: "host", until: 99), room: "r")
        let kicked = try await until(room) { $0.status == .kicked(by: "host", until: 99) }
        #expect(!kicked.publishing)
        #expect(await media.stopped)
        // A later close (4003) keeps the kick as the reason.
        fake.emit(.closed(code: 4003, reason: "kicked"))

        let other = VoiceRoom(roomId: "r", signaling: fake, clock: ManualClock())
        try await other.join()
        fake.emit(.roomEnded(reason: "ended"), room: "r", seq: 2)
        _ = try await until(other) { $0.status == .ended(reason: "ended") }
        #expect(await room.state.status == .kicked(by: "host", until: 99))
    }

    @Test func speakerLevelsLightTheSpeakingRing() async throws {
        let fake = FakeSignalingClient(user: "me", respond: Self.server { Self.snapshot(seq: 1, seats: [seat(0, "host"), seat(1, nil), seat(2, nil), seat(3, nil)]) })
        let room = VoiceRoom(roomId: "r", signaling: fake, clock: ManualClock())
        try await room.join()
        fake.emit(.speakerLevels([SpeakerLevel(user: "host", level: 70, vad: true)]), room: "r")
        let speaking = try await until(room) { $0.levels["host"] == 70 }
        #expect(VoiceRoomPresenter().present(speaking).seats[0].speaking)
        fake.emit(.speakerLevels([]), room: "r")
        let silent = try await until(room) { $0.levels.isEmpty }
        #expect(!VoiceRoomPresenter().present(silent).seats[0].speaking)
    }

    @Test func ownNetworkQualityShowsABanner() async throws {
        let fake = FakeSignalingClient(user: "me", respond: Self.server { Self.snapshot(seq: 1) })
        let room = VoiceRoom(roomId: "r", signaling: fake, clock: ManualClock())
        try await room.join()
        fake.emit(.networkQuality(user: "host", up: .down, down: .down), room: "r")
        fake.emit(.networkQuality(user: "me", up: .good, down: .bad), room: "r")
        let state = try await until(room) { $0.networkQuality != nil }
        #expect(state.networkQuality == .bad)  // the worse direction
        #expect(VoiceRoomPresenter().present(state).banners.map(\.kind) == [.networkPoor])
    }

    @Test func localAudioControls() async throws {
        var seatList = (0..<4).map { Seat(index: $0) }
        seatList[1] = Seat(index: 1, state: .occupied, user: "host", muted: false, micOn: true, ssrc: 4242)
        let seats = seatList
        let fake = FakeSignalingClient(user: "me", respond: Self.server { Self.snapshot(seq: 1, seats: seats) })
        let media = RecordingMedia()
        let room = VoiceRoom(roomId: "r", signaling: fake, media: media, clock: ManualClock())
        try await room.join()
        await room.setCaptureVolume(250)
        await room.setPlaybackVolume(900)
        #expect(await media.volumes == ["capture": 250, "playback": 400])
        try await room.muteRemote("host", muted: true)
        #expect(await media.mutedRemotes == [4242])
        try await room.muteRemote("host", muted: false)
        #expect(await media.mutedRemotes.isEmpty)
        do {
            try await room.muteRemote("nobody", muted: true)
            Issue.record("muted someone not seated")
        } catch {
            #expect(error == .misuse("nobody is not on a seat"))
        }
        // None of this asks the server anything.
        #expect(fake.ops == ["room.join", "chat.history"])
    }

    @Test func reconnectResyncsOrRejoins() async throws {
        let fake = FakeSignalingClient(user: "me", respond: Self.server { Self.snapshot(seq: 3) })
        let room = VoiceRoom(roomId: "r", signaling: fake, clock: ManualClock())
        try await room.join()
        fake.emit(.connectionLost(reason: "network"))
        _ = try await until(room) { $0.status == .reconnecting }
        let session = SessionInfo(session: "s", userId: "me", userName: "Me", heartbeat: 20, expiresAt: 0, resumed: true, rooms: ["r"])
        fake.emit(.reconnected(session))
        _ = try await until(room) { $0.status == .joined }
        #expect(fake.ops.suffix(2) == ["room.sync", "chat.history"])

        fake.emit(.connectionLost(reason: "network"))
        _ = try await until(room) { $0.status == .reconnecting }
        var gone = session
        gone.rooms = []
        fake.emit(.reconnected(gone))
        _ = try await until(room) { $0.status == .joined }
        #expect(fake.ops.contains { $0 == "room.join" } && fake.ops.filter { $0 == "room.join" }.count == 2)
    }

    @Test func chatArrivesOnceAndOlderPagesPrepend() async throws {
        let fake = FakeSignalingClient(user: "me", respond: Self.server { Self.snapshot(seq: 1) })
        let room = VoiceRoom(roomId: "r", signaling: fake, clock: ManualClock())
        try await room.join()
        let message = ChatMessage(msgId: 10, from: UserRef(id: "host", name: "Host"), type: "text", text: "hi", payload: nil, ts: 5)
        fake.emit(.chatMessage(message), room: "r")
        fake.emit(.chatMessage(message), room: "r")
        _ = try await until(room) { $0.chat.count == 1 }
        fake.respond { op, args in
            guard op == "chat.history" else { return .success([:]) }
            #expect(args["before"] == 10)
            return .success(["messages": [["msgId": 9, "from": ["id": "a", "name": "A"], "type": "text", "text": "older", "ts": 4]]])
        }
        #expect(try await room.loadOlderChat() == 1)
        #expect(await room.state.chat.map(\.msgId) == [9, 10])
        // Each send has its own clientMsgId, which is what makes server-side dedupe work.
        fake.respond(Self.server { Self.snapshot(seq: 1) })
        try await room.sendChat("a")
        let first = fake.lastArgs(of: "chat.send")?["clientMsgId"]
        try await room.sendChat("a")
        #expect(fake.lastArgs(of: "chat.send")?["clientMsgId"] != first)
    }
}

/// A media engine that records what it was told.
actor RecordingMedia: MediaEngine {
    private(set) var history: [Bool] = []
    private(set) var stopped = false
    private(set) var volumes: [String: Int] = [:]
    private(set) var mutedRemotes: Set<UInt32> = []
    func setPublishing(_ publishing: Bool) async { history.append(publishing) }
    func stop() async { stopped = true }
    func setCaptureVolume(_ volume: Int) async { volumes["capture"] = volume }
    func setPlaybackVolume(_ volume: Int) async { volumes["playback"] = volume }
    func setRemoteMuted(ssrc: UInt32, muted: Bool) async {
        if muted { mutedRemotes.insert(ssrc) } else { mutedRemotes.remove(ssrc) }
    }
}

/// A value shared between a test and a responder.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
