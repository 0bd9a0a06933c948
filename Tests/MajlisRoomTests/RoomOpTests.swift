import MajlisProtocol
import MajlisRoom
import Testing

@Suite struct RoomOpTests {
    @Test func updateSettings() {
        var room = RoomHarness(seats: 4)
        room.join("a")
        room.fails("a", .update(title: "x", announcement: nil, mode: nil, seatCount: nil), .forbidden)
        let outcome = room.ok("owner", .update(title: "New", announcement: "Hello", mode: .request, seatCount: 6))
        #expect(outcome.eventNames == ["room.updated"])
        #expect(room.engine.seats.count == 6 && room.engine.mode == .request && room.engine.title == "New")
        room.ok("owner", .takeSeat(index: 5))
        room.fails("owner", .update(title: nil, announcement: nil, mode: nil, seatCount: 3), .seatOccupied)
        room.ok("owner", .switchSeat(to: 0))
        room.ok("owner", .update(title: nil, announcement: nil, mode: nil, seatCount: 3))
        #expect(room.engine.seats.count == 3)
        #expect(room.ok("owner", .update(title: "New", announcement: nil, mode: nil, seatCount: nil)).deliveries.isEmpty)
    }

    @Test func muteChatAllLetsOnlyModeratorsChat() {
        var room = RoomHarness()
        room.join("a")
        room.fails("a", .muteChatAll(true), .forbidden)
        room.ok("owner", .muteChatAll(true))
        room.fails("a", .sendChat(ChatDraft(text: "x", clientMsgId: "1")), .chatMuted)
        room.ok("owner", .sendChat(ChatDraft(text: "x", clientMsgId: "1")))
        room.ok("owner", .muteChatAll(false))
        room.ok("a", .sendChat(ChatDraft(text: "x", clientMsgId: "1")))
    }

    @Test func endByOwnerOrServerAdmin() {
        var room = RoomHarness()
        room.join("a")
        room.ok("a", .takeSeat(index: 0))
        room.fails("a", .end, .forbidden)
        let outcome = room.ok("owner", .end)
        #expect(outcome.eventNames == ["room.ended"])
        #expect(outcome.effects.contains(.deleteRoom))
        #expect(room.engine.memberIds.isEmpty)

        var other = RoomHarness()
        other.grants["ops"] = Grants(admin: true)
        other.ok("ops", .end)
    }

    @Test func syncReturnsTheCurrentSnapshot() {
        var room = RoomHarness()
        room.join("a")
        room.ok("a", .takeSeat(index: 1))
        guard case .success(.snapshot(let snapshot)) = room.ok("a", .sync).reply else {
            Issue.record("no snapshot")
            return
        }
        #expect(snapshot.me.seat == 1)
        #expect(snapshot.seq == room.engine.seq)
    }

    @Test func seqGrowsByOnePerStateEventOnly() {
        var room = RoomHarness()
        room.join("a")
        var last = room.engine.seq
        let outcomes = [
            room.ok("a", .takeSeat(index: nil)),
            room.ok("a", .sendChat(ChatDraft(text: "hello", clientMsgId: "m"))),
            room.ok("a", .sendSignal(to: .room, type: "gift", payload: .object(["id": .int(3)]))),
            room.ok("owner", .lockSeat(index: 5, locked: true, kick: false)),
            room.ok("a", .leave),
        ]
        for outcome in outcomes {
            for delivery in outcome.deliveries {
                if delivery.event.changesRoomState {
                    #expect(delivery.seq == last + 1)
                    last += 1
                } else {
                    #expect(delivery.seq == nil)
                }
            }
        }
        #expect(last == room.engine.seq)
    }

    @Test func createOnAnExistingRoomIsRoomExists() {
        var room = RoomHarness()
        room.fails("owner", .create(RoomSettings()), .roomExists)
    }

    @Test func storedRoundTrip() {
        var room = RoomHarness()
        room.join("a")
        room.ok("owner", .setRole(user: "a", role: .admin))
        room.ok("owner", .lockSeat(index: 2, locked: true, kick: false))
        room.ok("owner", .muteSeat(index: 3, muted: true))
        room.ok("owner", .muteChatAll(true))
        let restored = RoomEngine(stored: room.engine.stored, bans: ["x": room.now + 5], lastMsgId: 42, recentChats: [])
        #expect(restored.stored == room.engine.stored)
        #expect(restored.seats[2].state == .locked && restored.seats[3].muted)
        #expect(restored.lastMsgId == 42)
        #expect(restored.memberIds.isEmpty)
    }

    /// The owner's and banned users' names are kept while they are away and restored with the
    /// room, so a console shows names, not ids; an expired ban forgets the name.
    @Test func theRoomKeepsTheNamesOfItsOwnerAndOfWhomItBans() {
        var room = RoomHarness()
        room.join("a")
        room.join("b")
        #expect(room.ok("owner", .kickMember(user: "a", banSeconds: 60)).effects.contains(.saveRoom))
        room.ok("owner", .kickMember(user: "b", banSeconds: 0))
        #expect(room.engine.stored.names == ["owner": "name-owner", "a": "name-a"])
        room.ok("owner", .leave)
        var restored = RoomEngine(stored: room.engine.stored, bans: room.engine.activeBans(now: room.now).reduce(into: [:]) { $0[$1.user] = $1.until }, lastMsgId: 0, recentChats: [])
        #expect(restored.name(of: "owner") == "name-owner" && restored.name(of: "a") == "name-a" && restored.name(of: "b") == nil)
        _ = restored.tick(now: room.now + 61_000)
        #expect(restored.stored.names == ["owner": "name-owner"])
        #expect(restored.name(of: "a") == nil)
    }

    /// Who sits where is stored (a seat change asks the store to save the room). Restored (after
    /// a restart, or on another node), the seated members are back, away, each holding its seat
    /// for the resume grace: one who joins again within it is on its seat at once, even in a
    /// room where seats need the host's approval; one who does not is removed then, and its seat
    /// freed and saved.
    @Test func seatedMembersKeepTheirSeatsAcrossARestore() {
        var room = RoomHarness()
        room.join("a")
        room.join("b")
        #expect(room.ok("a", .takeSeat(index: 1)).effects.contains(.saveRoom))
        #expect(room.ok("b", .takeSeat(index: 2)).effects.contains(.saveRoom))
        room.ok("owner", .update(title: nil, announcement: nil, mode: .request, seatCount: nil))
        #expect(room.engine.stored.occupants?.map(\.user) == ["a", "b"])

        let restored = RoomEngine(stored: room.engine.stored, bans: [:], lastMsgId: 0, recentChats: [], restoredAt: room.now)
        #expect(restored.memberIds == ["a", "b"] && restored.seats[1].user == "a" && restored.seats[2].user == "b")
        #expect(RoomEngine(stored: room.engine.stored, bans: [:], lastMsgId: 0, recentChats: []).memberIds.isEmpty, "nobody without a time to restore them at")
        room.engine = restored
        #expect(room.engine.invariantViolations() == [])
        room.now += 5_000
        room.join("a")
        #expect(room.seat(1).user == "a" && room.seat(1).micOn)
        room.now += RoomLimits().resumeGrace
        let outcome = room.engine.tick(now: room.now)
        #expect(outcome.effects.contains(.memberRemoved(user: "b", kicked: false, reason: "timeout")))
        #expect(outcome.effects.contains(.saveRoom))
        #expect(room.seat(2).state == .empty && room.seat(1).user == "a")
        #expect(room.engine.stored.occupants?.map(\.user) == ["a"])
    }
}
