import MajlisProtocol
import MajlisRoom
import Testing

@Suite struct MemberTests {
    @Test func joinAnnouncesToOthersAndIsIdempotent() {
        var room = RoomHarness()
        let first = room.join("a")
        #expect(first.deliveries.count == 1)
        #expect(first.deliveries[0].audience == .roomExcept("a"))
        guard case .success(.snapshot(let snapshot)) = first.reply else {
            Issue.record("no snapshot")
            return
        }
        #expect(snapshot.seq == room.engine.seq)
        #expect(snapshot.members.map(\.id) == ["owner", "a"])
        #expect(snapshot.room.memberCount == 2)
        #expect(snapshot.seats.count == 8)
        #expect(snapshot.me == SelfState(role: .member, seat: nil, chatMuted: false, request: nil))
        let again = room.join("a")
        #expect(again.deliveries.isEmpty)
        #expect(room.engine.memberIds == ["owner", "a"])
    }

    /// "System" is the server's own messages' name: a member asking for it is told apart.
    @Test func nobodyElseIsCalledSystem() {
        var room = RoomHarness()
        for (user, wanted) in [("x", "System"), ("y", "ｓｙｓｔｅｍ"), ("system", "System")] {
            _ = room.engine.handle(.join(create: nil), from: Caller(id: user, name: wanted, grants: Grants(), isOperator: false), now: 0)
        }
        let names = Dictionary(uniqueKeysWithValues: room.engine.snapshot(for: "x", now: 0).members.map { ($0.id, $0.name) })
        #expect(names["x"] == "System (x)")
        #expect(names["system"] == "System")
        #expect(names["y"]?.hasSuffix("(y)") == true, "\(names)")
    }

    @Test func joinNeedsTheGrantAndRoomSpace() {
        var room = RoomHarness()
        room.grants["nojoin"] = Grants(join: false)
        room.fails("nojoin", .join(create: nil), .forbidden)
        var limits = RoomLimits()
        limits.maxMembers = 2
        var small = RoomHarness(limits: limits)
        small.join("a")
        small.fails("b", .join(create: nil), .roomFull)
    }

    @Test func leaveClearsSeatRequestAndOwnedAttributes() {
        var room = RoomHarness()
        room.join("a")
        room.ok("a", .takeSeat(index: 0))
        room.ok("a", .attributes([.set(["mine": "1"], deleteOnLeave: true, updateOwner: false), .set(["kept": "2"], deleteOnLeave: false, updateOwner: false)], force: false, atomic: false))
        let left = room.ok("a", .leave)
        #expect(left.eventNames == ["seat.updated", "attr.updated", "member.left"])
        #expect(left.effects.contains(.memberRemoved(user: "a", kicked: false, reason: "left")))
        #expect(room.engine.snapshot(for: "owner", now: room.now).attributes.keys.sorted() == ["kept"])
        room.fails("a", .leave, .notInRoom)
        room.fails("a", .sync, .notInRoom)
    }

    @Test func snapshotListsModeratorsAndSeatedFirst() {
        var limits = RoomLimits()
        limits.snapshotOtherMembers = 3
        var room = RoomHarness(limits: limits)
        for index in 0..<10 { room.join("u\(index)") }
        room.ok("u7", .takeSeat(index: 0))
        room.ok("owner", .setRole(user: "u9", role: .admin))
        let snapshot = room.engine.snapshot(for: "u1", now: room.now)
        #expect(snapshot.members.map(\.id) == ["owner", "u9", "u7", "u0", "u1", "u2"])
        #expect(snapshot.room.memberCount == 11)
    }

    @Test func memberListPages() {
        var room = RoomHarness()
        for index in 0..<5 { room.join("u\(index)") }
        guard case .success(.members(let page, let next)) = room.ok("u0", .listMembers(after: nil, limit: 4)).reply else {
            Issue.record("no page")
            return
        }
        #expect(page.map(\.id) == ["owner", "u0", "u1", "u2"])
        #expect(next == "u2")
        guard case .success(.members(let rest, let end)) = room.ok("u0", .listMembers(after: next, limit: 4)).reply else {
            Issue.record("no page")
            return
        }
        #expect(rest.map(\.id) == ["u3", "u4"])
        #expect(end == nil)
    }

    @Test func memberUpdateBroadcasts() {
        var room = RoomHarness()
        room.join("a")
        let outcome = room.ok("a", .updateMember(name: "Aisha", avatar: "https://x/a.png"))
        guard case .memberUpdated(let member)? = outcome.events(to: .room).first else {
            Issue.record("no event")
            return
        }
        #expect(member.name == "Aisha" && member.avatar == "https://x/a.png")
    }

    @Test func rolesAndTransfer() {
        var room = RoomHarness()
        room.join("a")
        room.join("b")
        room.fails("a", .setRole(user: "b", role: .admin), .forbidden)
        room.fails("owner", .setRole(user: "zed", role: .admin), .notInRoom)
        room.ok("owner", .setRole(user: "a", role: .admin))
        room.fails("a", .setRole(user: "b", role: .admin), .forbidden)
        room.fails("a", .transferOwner(user: "b"), .forbidden)
        room.fails("owner", .transferOwner(user: "zed"), .notInRoom)
        // A member who refused to be handed the room is not, until it takes that back.
        let refusal = room.ok("b", .updateMember(name: nil, avatar: nil, refusesOwnership: true))
        guard case .memberUpdated(let refusing)? = refusal.events(to: .room).first else {
            Issue.record("no event")
            return
        }
        #expect(refusing.refusesOwnership == true)
        room.fails("owner", .transferOwner(user: "b"), .forbidden)
        #expect(room.engine.owner == "owner")
        room.ok("b", .updateMember(name: nil, avatar: nil, refusesOwnership: false))
        let outcome = room.ok("owner", .transferOwner(user: "b"))
        #expect(outcome.eventNames == ["room.updated", "member.updated", "member.updated"])
        #expect(room.engine.owner == "b")
        #expect(room.engine.snapshot(for: "owner", now: room.now).me.role == .admin)
        #expect(room.engine.snapshot(for: "b", now: room.now).me.role == .owner)
        #expect(outcome.effects.contains(.saveRoom))
        room.fails("b", .setRole(user: "b", role: .member), .forbidden)
    }

    @Test func kickWithBan() {
        var room = RoomHarness()
        room.join("a")
        room.join("admin")
        room.join("admin2")
        room.ok("owner", .setRole(user: "admin", role: .admin))
        room.ok("owner", .setRole(user: "admin2", role: .admin))
        room.fails("a", .kickMember(user: "admin", banSeconds: 0), .forbidden)
        room.fails("admin", .kickMember(user: "owner", banSeconds: 0), .forbidden)
        room.fails("admin", .kickMember(user: "admin2", banSeconds: 0), .forbidden)
        room.fails("admin", .kickMember(user: "ghost", banSeconds: 0), .notInRoom)
        room.ok("a", .takeSeat(index: 0))
        let outcome = room.ok("admin", .kickMember(user: "a", banSeconds: 60))
        #expect(outcome.events(to: .user("a")) == [.youKicked(by: "admin", until: room.now + 60_000)])
        #expect(outcome.eventNames == ["you.kicked", "seat.updated", "member.left"])
        #expect(outcome.effects.contains(.saveBan(user: "a", until: room.now + 60_000)))
        #expect(outcome.effects.contains(.memberRemoved(user: "a", kicked: true, reason: "kicked")))
        room.fails("a", .join(create: nil), .banned)
        room.now += 60_000
        room.join("a")
        #expect(room.engine.isMember("a"))
        // The owner may kick admins.
        room.ok("owner", .kickMember(user: "admin2", banSeconds: 0))
        room.join("admin2")
    }

    @Test func chatMutePerUserExpires() {
        var room = RoomHarness()
        room.join("a")
        room.fails("a", .muteChat(user: "owner", seconds: 10), .forbidden)
        room.fails("owner", .muteChat(user: "nobody", seconds: 10), .notInRoom)
        let muted = room.ok("owner", .muteChat(user: "a", seconds: 10))
        #expect(muted.events(to: .user("a")) == [.youChatMuted(until: room.now + 10_000)])
        room.fails("a", .sendChat(ChatDraft(text: "hi", clientMsgId: "c1")), .chatMuted)
        room.now += 10_000
        let tick = room.engine.tick(now: room.now)
        #expect(tick.eventNames == ["you.chatMuted", "member.updated"])
        room.ok("a", .sendChat(ChatDraft(text: "hi", clientMsgId: "c1")))
        room.ok("owner", .muteChat(user: "a", seconds: 100))
        room.ok("owner", .muteChat(user: "a", seconds: 0))
        room.ok("a", .sendChat(ChatDraft(text: "again", clientMsgId: "c2")))
    }

    @Test func droppedMemberKeepsSeatThroughGrace() {
        var room = RoomHarness()
        room.join("a")
        room.ok("a", .takeSeat(index: 2))
        room.engine.disconnect("a", now: room.now)
        room.now += 29_000
        #expect(room.engine.tick(now: room.now).deliveries.isEmpty)
        room.engine.reconnect("a")
        room.now += 10_000
        #expect(room.engine.tick(now: room.now).deliveries.isEmpty)
        #expect(room.seat(2).user == "a")
        room.engine.disconnect("a", now: room.now)
        room.now += 30_000
        let out = room.engine.tick(now: room.now)
        #expect(out.eventNames == ["seat.updated", "member.left"])
        #expect(out.deliveries.last?.event == .memberLeft(user: "a", reason: "timeout"))
        #expect(!room.engine.isMember("a"))
    }

    @Test func busyRoomsCoalesceJoinsAndLeaves() {
        var limits = RoomLimits()
        limits.coalesceMembersAbove = 4
        var room = RoomHarness(limits: limits)
        room.join("a")
        room.join("b")
        #expect(room.join("c").eventNames == ["member.joined"])
        // The fourth member makes the room busy: the first batch goes out at once...
        let first = room.join("d")
        #expect(first.deliveries.map(\.event) == [.membersChanged(joined: [room.engine.snapshot(for: "d", now: room.now).members.first { $0.id == "d" }!], joinedCount: 1, left: [], memberCount: 5)])
        // ...then joins and leaves wait for the interval.
        room.now += 100
        #expect(room.join("e").deliveries.isEmpty)
        #expect(room.ok("a", .leave).deliveries.isEmpty)
        room.join("f")
        #expect(room.ok("f", .leave).deliveries.isEmpty)  // joined and left unseen: nothing to say
        #expect(room.engine.nextDeadline == room.now - 100 + 500)
        room.now += 400
        let batch = room.engine.tick(now: room.now)
        guard case .membersChanged(let joined, let joinedCount, let left, let count)? = batch.deliveries.first?.event else {
            Issue.record("no batch: \(batch.eventNames)")
            return
        }
        #expect(joined.map(\.id) == ["e"])
        #expect(joinedCount == 1)
        #expect(left == ["a"])
        #expect(count == 5)
        #expect(batch.deliveries.first?.seq == room.engine.seq)
        #expect(room.engine.tick(now: room.now + 1000).deliveries.isEmpty)
    }
}
