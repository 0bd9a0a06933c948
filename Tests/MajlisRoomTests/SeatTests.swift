import MajlisProtocol
import MajlisRoom
import Testing

@Suite struct SeatTests {
    @Test func takeLowestFreeSeatAndSpecificSeat() {
        var room = RoomHarness()
        room.join("a")
        room.join("b")
        let outcome = room.ok("a", .takeSeat(index: nil))
        #expect(room.seat(0).user == "a" && room.seat(0).state == .occupied && room.seat(0).micOn)
        #expect(outcome.deliveries == [Delivery(audience: .room, seq: room.engine.seq, event: .seatUpdated([room.seat(0)]))])
        room.ok("b", .takeSeat(index: 5))
        #expect(room.seat(5).user == "b")
        #expect(room.engine.seatIndex(of: "b") == 5)
    }

    @Test func takeErrors() {
        var room = RoomHarness(seats: 2)
        room.join("a")
        room.join("b")
        room.join("c")
        room.fails("a", .takeSeat(index: 2), .seatOutOfRange)
        room.fails("a", .takeSeat(index: -1), .seatOutOfRange)
        room.ok("a", .takeSeat(index: 0))
        room.fails("a", .takeSeat(index: 1), .alreadySeated)
        room.fails("b", .takeSeat(index: 0), .seatOccupied)
        room.ok("owner", .lockSeat(index: 1, locked: true, kick: false))
        room.fails("b", .takeSeat(index: 1), .seatLocked)
        room.fails("b", .takeSeat(index: nil), .noFreeSeat)
        room.fails("stranger", .takeSeat(index: nil), .notInRoom)
    }

    @Test func requestModeNeedsApprovalExceptForModerators() {
        var room = RoomHarness(mode: .request)
        room.join("a")
        room.fails("a", .takeSeat(index: 1), .approvalRequired)
        room.ok("owner", .takeSeat(index: 0))
        room.ok("owner", .setRole(user: "a", role: .admin))
        room.ok("a", .takeSeat(index: 1))
    }

    @Test func leaveSeat() {
        var room = RoomHarness()
        room.join("a")
        room.fails("a", .leaveSeat, .notSeated)
        room.ok("a", .takeSeat(index: 3))
        room.ok("a", .leaveSeat)
        #expect(room.seat(3) == Seat(index: 3))
    }

    @Test func switchIsAtomic() {
        var room = RoomHarness(seats: 4)
        room.join("a")
        room.join("b")
        room.fails("a", .switchSeat(to: 1), .notSeated)
        room.ok("a", .takeSeat(index: 0))
        room.ok("b", .takeSeat(index: 1))
        room.ok("a", .setMic(on: false))
        room.fails("a", .switchSeat(to: 1), .seatOccupied)
        room.fails("a", .switchSeat(to: 9), .seatOutOfRange)
        room.ok("owner", .lockSeat(index: 3, locked: true, kick: false))
        room.fails("a", .switchSeat(to: 3), .seatLocked)
        #expect(room.seat(0).user == "a")
        let outcome = room.ok("a", .switchSeat(to: 2))
        #expect(room.seat(0) == Seat(index: 0))
        #expect(room.seat(2) == Seat(index: 2, state: .occupied, user: "a", muted: false, micOn: false))
        #expect(outcome.deliveries.count == 1)
    }

    @Test func lockWithAndWithoutKick() {
        var room = RoomHarness()
        room.join("a")
        room.join("admin")
        room.ok("owner", .setRole(user: "admin", role: .admin))
        room.ok("a", .takeSeat(index: 2))
        room.fails("a", .lockSeat(index: 2, locked: true, kick: true), .forbidden)
        room.fails("owner", .lockSeat(index: 2, locked: true, kick: false), .seatOccupied)
        room.fails("owner", .lockSeat(index: 8, locked: true, kick: false), .seatOutOfRange)
        let outcome = room.ok("admin", .lockSeat(index: 2, locked: true, kick: true))
        #expect(room.seat(2).state == .locked && room.seat(2).user == nil)
        #expect(outcome.effects.contains(.saveRoom))
        #expect(room.engine.seatIndex(of: "a") == nil)
        room.ok("owner", .lockSeat(index: 2, locked: false, kick: false))
        #expect(room.seat(2).state == .empty)
        // Admins may not unseat the owner, even by locking.
        room.ok("owner", .takeSeat(index: 4))
        room.fails("admin", .lockSeat(index: 4, locked: true, kick: true), .forbidden)
    }

    @Test func hostMuteStaysWithTheSeat() {
        var room = RoomHarness()
        room.join("a")
        room.ok("a", .takeSeat(index: 1))
        #expect(room.engine.mayPublish("a"))
        room.fails("a", .muteSeat(index: 1, muted: true), .forbidden)
        room.fails("owner", .muteSeat(index: 99, muted: true), .seatOutOfRange)
        room.ok("owner", .muteSeat(index: 1, muted: true))
        #expect(!room.engine.mayPublish("a"))
        room.ok("a", .leaveSeat)
        #expect(room.seat(1).muted)
        room.ok("a", .takeSeat(index: 1))
        #expect(!room.engine.mayPublish("a"))
        room.ok("owner", .muteSeat(index: 1, muted: false))
        #expect(room.engine.mayPublish("a"))
        room.ok("a", .setMic(on: false))
        #expect(!room.engine.mayPublish("a"))
    }

    @Test func publishNeedsTheGrant() {
        var room = RoomHarness()
        room.grants["quiet"] = Grants(publish: false)
        room.join("quiet")
        room.ok("quiet", .takeSeat(index: 0))
        #expect(!room.engine.mayPublish("quiet"))
    }

    @Test func kickFromSeat() {
        var room = RoomHarness()
        room.join("a")
        room.join("admin")
        room.ok("owner", .setRole(user: "admin", role: .admin))
        room.fails("admin", .kickFromSeat(index: 0), .notSeated)
        room.ok("a", .takeSeat(index: 0))
        room.fails("a", .kickFromSeat(index: 0), .forbidden)
        room.fails("admin", .kickFromSeat(index: 20), .seatOutOfRange)
        room.ok("admin", .kickFromSeat(index: 0))
        #expect(room.engine.isMember("a") && room.engine.seatIndex(of: "a") == nil)
        room.ok("owner", .takeSeat(index: 1))
        room.fails("admin", .kickFromSeat(index: 1), .forbidden)
    }

    @Test func micSet() {
        var room = RoomHarness()
        room.join("a")
        room.fails("a", .setMic(on: true), .notSeated)
        room.ok("a", .takeSeat(index: 0))
        let outcome = room.ok("a", .setMic(on: false))
        #expect(outcome.events(to: .room) == [.seatUpdated([Seat(index: 0, state: .occupied, user: "a", muted: false, micOn: false)])])
        #expect(room.ok("a", .setMic(on: false)).deliveries.isEmpty)
    }

    @Test func inviteAcceptSeatsEvenInRequestMode() {
        var room = RoomHarness(mode: .request)
        room.join("a")
        room.join("b")
        room.fails("a", .inviteToSeat(user: "b", index: nil), .forbidden)
        room.fails("owner", .inviteToSeat(user: "nobody", index: nil), .notInRoom)
        room.fails("owner", .inviteToSeat(user: "a", index: 8), .seatOutOfRange)
        let outcome = room.ok("owner", .inviteToSeat(user: "a", index: 3))
        guard case .seatInvited(let inviteId, let from, let index)? = outcome.events(to: .user("a")).first else {
            Issue.record("no invite event")
            return
        }
        #expect(from == "owner" && index == 3)
        room.fails("b", .replyToInvite(inviteId: inviteId, accept: true), .inviteNotFound)
        let reply = room.ok("a", .replyToInvite(inviteId: inviteId, accept: true))
        #expect(room.seat(3).user == "a")
        #expect(reply.events(to: .user("owner")) == [.inviteReplied(inviteId: inviteId, user: "a", accept: true)])
        room.fails("a", .replyToInvite(inviteId: inviteId, accept: true), .inviteNotFound)
        room.fails("owner", .inviteToSeat(user: "a", index: nil), .alreadySeated)
    }

    @Test func invitesExpireAfterSixtySeconds() {
        var room = RoomHarness()
        room.join("a")
        room.ok("owner", .inviteToSeat(user: "a", index: nil))
        room.now += 60_000
        _ = room.engine.tick(now: room.now)
        room.fails("a", .replyToInvite(inviteId: "i1", accept: true), .inviteNotFound)
    }

    @Test func declinedInviteTellsTheInviter() {
        var room = RoomHarness()
        room.join("a")
        room.ok("owner", .inviteToSeat(user: "a", index: nil))
        let outcome = room.ok("a", .replyToInvite(inviteId: "i1", accept: false))
        #expect(outcome.events(to: .user("owner")) == [.inviteReplied(inviteId: "i1", user: "a", accept: false)])
        #expect(room.engine.seatIndex(of: "a") == nil)
    }
}
