import MajlisProtocol
import MajlisRoom
import Testing

/// The app's backend acting on a room through the server API: no member, moderator's rights.
@Suite struct OperatorTests {
    static func room() -> RoomHarness {
        var room = RoomHarness(seats: 3)
        room.grants["api"] = Grants(join: false, admin: true)
        room.operators = ["api"]
        room.join("a")
        room.join("b")
        room.ok("a", .takeSeat(index: 0))
        room.ok("b", .takeSeat(index: 2))
        return room
    }

    @Test func moderatesWithoutJoining() {
        var room = Self.room()
        room.ok("api", .muteSeat(index: 0, muted: true))
        room.ok("api", .kickFromSeat(index: 2))
        #expect(room.seat(2).user == nil)
        let kicked = room.ok("api", .kickMember(user: "owner", banSeconds: 0))
        #expect(kicked.events(to: .user("owner")) == [.youKicked(by: "api", until: nil)])
        #expect(!room.engine.isMember("api") && !room.engine.memberIds.contains("owner"))
        let chat = room.ok("api", .sendChat(ChatDraft(text: "notice", clientMsgId: "n1")))
        #expect(chat.reply == .success(.chatPosted(msgId: 1, ts: room.now)))
    }

    @Test func cannotTakeAMembersPlace() {
        var room = Self.room()
        for command: RoomCommand in [.takeSeat(index: 1), .leaveSeat, .setMic(on: true), .createRequest(index: nil), .updateMember(name: "x", avatar: nil), .leave] {
            room.fails("api", command, .notInRoom)
            #expect(!RoomEngine.operatorMay(command))
        }
        // Without the flag, the same grants are a stranger's.
        room.operators = []
        room.fails("api", .muteSeat(index: 0, muted: true), .notInRoom)
    }

    @Test func muteAllHostMutesEverySeatOrTurnsMicsOff() {
        var room = Self.room()
        let hard = room.ok("api", .muteAllSeats(muted: true, membersMayUnmute: false))
        #expect(room.engine.seats.filter(\.muted).count == 3)
        #expect(hard.eventNames == ["seat.updated"] && hard.effects == [.saveRoom])
        room.fails("a", .muteSeat(index: 0, muted: false), .forbidden)
        room.ok("api", .muteAllSeats(muted: false, membersMayUnmute: false))
        #expect(room.engine.seats.filter(\.muted).isEmpty && room.engine.mayPublish("a"))

        let soft = room.ok("owner", .muteAllSeats(muted: true, membersMayUnmute: true))
        #expect(!room.engine.mayPublish("a") && !room.engine.mayPublish("b") && soft.effects.isEmpty)
        if case .seatUpdated(let seats) = soft.deliveries.first?.event { #expect(seats.map(\.index) == [0, 2]) }
        room.ok("a", .setMic(on: true))
        #expect(room.engine.mayPublish("a"))
        // Nothing to change: no event.
        #expect(room.ok("api", .muteAllSeats(muted: false, membersMayUnmute: false)).deliveries.isEmpty)
        room.fails("a", .muteAllSeats(muted: true, membersMayUnmute: false), .forbidden)
    }

    @Test func unbanLetsTheUserBackIn() {
        var room = Self.room()
        room.ok("api", .kickMember(user: "b", banSeconds: 600))
        room.ok("api", .kickMember(user: "stranger", banSeconds: 60))
        #expect(room.engine.activeBans(now: room.now).map(\.user) == ["b", "stranger"])
        room.fails("b", .join(create: nil), .banned)
        let lifted = room.ok("api", .unban(user: "b"))
        #expect(lifted.effects == [.saveBan(user: "b", until: 0)])
        #expect(room.ok("api", .unban(user: "nobody")).effects.isEmpty)
        room.ok("b", .join(create: nil))
        room.now += 61_000
        #expect(room.engine.activeBans(now: room.now).isEmpty)
    }
}
