import MajlisProtocol
import MajlisRoom
import Testing

@Suite struct RequestTests {
    @Test func fullRequestToSpeakFlow() {
        var room = RoomHarness(mode: .request)
        room.join("admin")
        room.ok("owner", .setRole(user: "admin", role: .admin))
        room.join("a")
        let created = room.ok("a", .createRequest(index: 2))
        guard case .success(.requestCreated(let id)) = created.reply else {
            Issue.record("no request id")
            return
        }
        #expect(created.deliveries.map(\.audience) == [.moderators])
        #expect(room.engine.snapshot(for: "owner", now: room.now).requests.map(\.id) == [id])
        #expect(room.engine.snapshot(for: "a", now: room.now).requests == [])
        #expect(room.engine.snapshot(for: "a", now: room.now).me.request?.id == id)
        room.fails("a", .createRequest(index: nil), .alreadyRequested)
        room.fails("a", .acceptRequest(requestId: id, index: nil), .forbidden)
        let accepted = room.ok("admin", .acceptRequest(requestId: id, index: nil))
        #expect(room.seat(2).user == "a")
        #expect(accepted.events(to: .user("a")) == [.requestAccepted(requestId: id, index: 2)])
        #expect(accepted.events(to: .moderators) == [.requestCancelled(requestId: id, user: "a", reason: "accepted")])
        room.fails("a", .createRequest(index: nil), .alreadySeated)
        room.fails("admin", .acceptRequest(requestId: id, index: nil), .requestNotFound)
    }

    @Test func acceptFailureLeavesTheRequestPending() {
        var room = RoomHarness(mode: .request, seats: 1)
        room.join("a")
        room.join("b")
        room.ok("owner", .takeSeat(index: 0))
        room.ok("a", .createRequest(index: nil))
        room.fails("owner", .acceptRequest(requestId: "q1", index: nil), .noFreeSeat)
        room.fails("owner", .acceptRequest(requestId: "q1", index: 0), .seatOccupied)
        room.fails("owner", .acceptRequest(requestId: "q1", index: 4), .seatOutOfRange)
        #expect(room.engine.snapshot(for: "owner", now: room.now).requests.count == 1)
        room.ok("owner", .leaveSeat)
        room.ok("owner", .acceptRequest(requestId: "q1", index: nil))
        #expect(room.seat(0).user == "a")
    }

    @Test func cancelAndReject() {
        var room = RoomHarness(mode: .request)
        room.join("a")
        room.join("b")
        room.fails("a", .createRequest(index: 30), .seatOutOfRange)
        room.ok("a", .createRequest(index: nil))
        room.fails("b", .cancelRequest(requestId: "q1"), .requestNotFound)
        let cancelled = room.ok("a", .cancelRequest(requestId: "q1"))
        #expect(cancelled.events(to: .moderators) == [.requestCancelled(requestId: "q1", user: "a", reason: "cancelled")])
        room.fails("a", .cancelRequest(requestId: "q1"), .requestNotFound)
        room.ok("b", .createRequest(index: nil))
        room.fails("b", .rejectRequest(requestId: "q2"), .forbidden)
        room.fails("owner", .rejectRequest(requestId: "nope"), .requestNotFound)
        let rejected = room.ok("owner", .rejectRequest(requestId: "q2"))
        #expect(rejected.events(to: .user("b")) == [.requestRejected(requestId: "q2")])
        #expect(room.engine.seatIndex(of: "b") == nil)
    }

    @Test func requestsExpireAfterFiveMinutesAndEndWhenTheUserLeaves() {
        var room = RoomHarness(mode: .request)
        room.join("a")
        room.join("b")
        room.ok("a", .createRequest(index: nil))
        room.now += 100_000
        room.ok("b", .createRequest(index: nil))
        room.now += 200_000
        let expired = room.engine.tick(now: room.now)
        #expect(expired.events(to: .moderators) == [.requestCancelled(requestId: "q1", user: "a", reason: "expired")])
        #expect(expired.events(to: .user("a")) == [.requestCancelled(requestId: "q1", user: "a", reason: "expired")])
        let left = room.ok("b", .leave)
        #expect(left.events(to: .moderators) == [.requestCancelled(requestId: "q2", user: "b", reason: "left")])
        #expect(room.engine.snapshot(for: "owner", now: room.now).requests == [])
    }

    @Test func beingSeatedByInviteEndsTheRequest() {
        var room = RoomHarness(mode: .request)
        room.join("a")
        room.ok("a", .createRequest(index: nil))
        room.ok("owner", .inviteToSeat(user: "a", index: 1))
        let outcome = room.ok("a", .replyToInvite(inviteId: "i2", accept: true))
        #expect(outcome.events(to: .moderators) == [.requestCancelled(requestId: "q1", user: "a", reason: "seated")])
    }
}
