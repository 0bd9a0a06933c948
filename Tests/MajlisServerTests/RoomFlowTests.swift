import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

@Suite(.serialized) struct RoomFlowTests {
    func code(of error: any Error) -> ErrorCode? { (error as? ProtocolError)?.code }

    func expectError(_ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(code.rawValue)", sourceLocation: sourceLocation)
        } catch {
            #expect(self.code(of: error) == code, "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func requestToSpeakFlow() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        let guest = try await TestClient.signedIn(server, user: "guest")
        let other = try await TestClient.signedIn(server, user: "other")
        let created = try await host.call("room.create", room: "majlis", ["title": "Evening", "mode": "request", "seatCount": 4])
        #expect(created["room"]?["owner"] == "host")
        #expect(created["seats"]?.arrayValue?.count == 4)
        let joined = try await guest.call("room.join", room: "majlis")
        #expect(joined["me"]?["role"] == "member")
        try await host.event("member.joined") { $0["data"]?["member"]?["id"] == "guest" }
        try await other.call("room.join", room: "majlis")

        await expectError(.approvalRequired) { try await guest.call("seat.take", room: "majlis", ["index": 1]) }
        let request = try await guest.call("request.create", room: "majlis", ["index": 1])
        let requestId = try #require(request["requestId"]?.stringValue)
        let received = try await host.event("request.received")
        #expect(received["data"]?["request"]?["user"] == "guest")
        #expect(received["seq"] == nil)
        let hostView = try await host.call("room.sync", room: "majlis")
        #expect(hostView["requests"]?.arrayValue?.count == 1)
        #expect(try await other.call("room.sync", room: "majlis")["requests"] == [])
        await expectError(.forbidden) { try await other.call("request.accept", room: "majlis", ["requestId": .string(requestId)]) }

        try await host.call("request.accept", room: "majlis", ["requestId": .string(requestId)])
        let accepted = try await guest.event("request.accepted")
        #expect(accepted["data"]?["index"] == 1)
        let seatEvent = try await other.event("seat.updated")
        #expect(seatEvent["data"]?["seats"]?.arrayValue?.first?["user"] == "guest")
        let guestSeat = try await guest.event("seat.updated")
        #expect(guestSeat["seq"] == seatEvent["seq"])

        try await guest.call("mic.set", room: "majlis", ["on": false])
        try await guest.call("seat.leave", room: "majlis")
        try await guest.call("room.leave", room: "majlis")
        let left = try await other.event("member.left") { $0["data"]?["user"] == "guest" }
        #expect(left["data"]?["reason"] == "left")
        await expectError(.notInRoom) { try await guest.call("room.sync", room: "majlis") }
    }

    @Test func exactlyOneWinsASeatRace() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let owner = try await TestClient.signedIn(server, user: "owner")
        try await owner.call("room.create", room: "race")
        var racers: [TestClient] = []
        for index in 0..<12 {
            let client = try await TestClient.signedIn(server, user: "racer\(index)")
            try await client.call("room.join", room: "race")
            racers.append(client)
        }
        let results = await withTaskGroup(of: Result<JSONValue, any Error>.self) { group in
            for racer in racers {
                group.addTask {
                    do { return .success(try await racer.call("seat.take", room: "race", ["index": 3])) } catch { return .failure(error) }
                }
            }
            var all: [Result<JSONValue, any Error>] = []
            for await result in group { all.append(result) }
            return all
        }
        let wins = results.filter { if case .success = $0 { return true } else { return false } }.count
        let occupied = results.filter { if case .failure(let error) = $0 { return code(of: error) == .seatOccupied } else { return false } }.count
        #expect(wins == 1)
        #expect(occupied == 11)
        let snapshot = try await owner.call("room.sync", room: "race")
        let winner = snapshot["seats"]?.arrayValue?[3]["user"]?.stringValue
        #expect(winner?.hasPrefix("racer") == true)
        // Every member saw the same single seat change.
        for racer in racers {
            let event = try await racer.event("seat.updated")
            #expect(event["data"]?["seats"]?.arrayValue?.first?["user"]?.stringValue == winner)
        }
    }

    @Test func moderationKickBanAndChatMute() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let owner = try await TestClient.signedIn(server, user: "owner")
        let admin = try await TestClient.signedIn(server, user: "admin")
        let troll = try await TestClient.signedIn(server, user: "troll")
        try await owner.call("room.create", room: "mod")
        try await admin.call("room.join", room: "mod")
        try await troll.call("room.join", room: "mod")
        try await owner.call("member.role", room: "mod", ["user": "admin", "role": "admin"])
        await expectError(.forbidden) { try await admin.call("member.kick", room: "mod", ["user": "owner"]) }
        await expectError(.forbidden) { try await troll.call("member.kick", room: "mod", ["user": "admin"]) }

        try await admin.call("member.muteChat", room: "mod", ["user": "troll", "seconds": 60])
        let muted = try await troll.event("you.chatMuted")
        #expect(muted["data"]?["until"]?.intValue != nil)
        await expectError(.chatMuted) { try await troll.call("chat.send", room: "mod", ["text": "spam", "clientMsgId": "s1"]) }

        try await troll.call("seat.take", room: "mod", ["index": 0])
        try await owner.call("seat.mute", room: "mod", ["index": 0, "muted": true])
        try await admin.call("member.kick", room: "mod", ["user": "troll", "banSeconds": 3600])
        let kicked = try await troll.event("you.kicked")
        #expect(kicked["data"]?["by"] == "admin")
        #expect(try await troll.closed() == 4003)
        let left = try await owner.event("member.left") { $0["data"]?["user"] == "troll" }
        #expect(left["data"]?["reason"] == "kicked")
        let sync = try await owner.call("room.sync", room: "mod")
        #expect(sync["seats"]?.arrayValue?[0]["state"] == "empty")
        #expect(sync["seats"]?.arrayValue?[0]["muted"] == true)

        let back = try await TestClient.signedIn(server, user: "troll")
        await expectError(.banned) { try await back.call("room.join", room: "mod") }
    }

    @Test func chatFanOutDedupeRidAndHistory() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let alice = try await TestClient.signedIn(server, user: "alice")
        let bob = try await TestClient.signedIn(server, user: "bob")
        try await alice.call("room.create", room: "chat")
        try await bob.call("room.join", room: "chat")
        let posted = try await alice.call("chat.send", room: "chat", ["type": "text", "text": "مرحبا", "clientMsgId": "m1"])
        let message = try await bob.event("chat.message")
        #expect(message["data"]?["text"] == "مرحبا")
        #expect(message["data"]?["msgId"] == posted["msgId"])
        #expect(message["data"]?["from"]?["id"] == "alice")
        try await alice.event("chat.message")
        // The same clientMsgId stores one message; a retry with the same rid gets the first answer.
        #expect(try await alice.call("chat.send", room: "chat", ["text": "مرحبا", "clientMsgId": "m1"]) == posted)
        let first = try await alice.call("chat.send", room: "chat", ["text": "two", "clientMsgId": "m2"], rid: "rid-2")
        let retry = try await alice.call("chat.send", room: "chat", ["text": "two", "clientMsgId": "m2"], rid: "rid-2")
        #expect(first == retry)
        let gift = try await alice.call("chat.send", room: "chat", ["type": "gift", "payload": ["gift": "rose", "count": 3], "clientMsgId": "m3"])
        let history = try await bob.call("chat.history", room: "chat", ["limit": 2])
        let ids = history["messages"]?.arrayValue?.compactMap { $0["msgId"]?.intValue }
        #expect(ids == [gift["msgId"]!.intValue!, first["msgId"]!.intValue!])
        #expect(history["messages"]?.arrayValue?.first?["payload"]?["gift"] == "rose")
        let older = try await bob.call("chat.history", room: "chat", ["before": .int(first["msgId"]!.intValue!), "limit": 10])
        #expect(older["messages"]?.arrayValue?.count == 1)
        await expectError(.tooLarge) { try await bob.call("chat.send", room: "chat", ["text": .string(String(repeating: "a", count: 501)), "clientMsgId": "big"]) }
        try await alice.call("room.muteChatAll", room: "chat", ["on": true])
        await expectError(.chatMuted) { try await bob.call("chat.send", room: "chat", ["text": "hey", "clientMsgId": "m9"]) }
    }

    @Test func attributesAndSignals() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let alice = try await TestClient.signedIn(server, user: "alice")
        let bob = try await TestClient.signedIn(server, user: "bob")
        try await alice.call("room.create", room: "attrs")
        try await bob.call("room.join", room: "attrs")
        #expect(try await bob.call("attr.set", room: "attrs", ["attrs": ["theme": "dark"]]) == ["failed": []])
        let update = try await alice.event("attr.updated")
        try await bob.call("attr.set", room: "attrs", ["attrs": ["bob.pos": "1"], "deleteOnLeave": true])
        #expect(update["data"]?["set"]?["theme"] == ["value": "dark", "owner": "bob"])
        #expect(try await alice.call("attr.set", room: "attrs", ["attrs": ["theme": "light"]]) == ["failed": ["theme"]])
        await expectError(.forbidden) { try await bob.call("attr.set", room: "attrs", ["attrs": ["x": "1"], "force": true]) }
        await expectError(.conflict) {
            try await alice.call("attr.batch", room: "attrs", ["ops": [["op": "set", "attrs": ["a": "1"]], ["op": "delete", "keys": ["theme"]]]])
        }
        #expect(try await alice.call("room.sync", room: "attrs")["attributes"]?["a"] == nil)
        try await alice.call("attr.set", room: "attrs", ["attrs": ["theme": "light"], "force": true])

        try await bob.call("signal.send", room: "attrs", ["to": ["alice"], "type": "emoji", "payload": ["e": "🎉"]])
        let signal = try await alice.event("signal")
        #expect(signal["data"] == ["from": "bob", "type": "emoji", "payload": ["e": "🎉"]])

        try await bob.call("room.leave", room: "attrs")
        let removed = try await alice.event("attr.updated") { $0["data"]?["deleted"]?.arrayValue?.isEmpty == false }
        #expect(removed["data"]?["deleted"] == ["bob.pos"])
        #expect(try await alice.call("room.sync", room: "attrs")["attributes"]?["theme"] == ["value": "light", "owner": "bob"])
    }

    @Test func errorsInProtocolOrder() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let alice = try await TestClient.signedIn(server, user: "alice")
        let limited = try await TestClient.signedIn(server, user: "limited", grants: Grants(create: false))
        await expectError(.roomNotFound) { try await alice.call("room.join", room: "nowhere") }
        await expectError(.roomNotFound) { try await alice.call("seat.take", room: "nowhere") }
        await expectError(.forbidden) { try await limited.call("room.create", room: "mine") }
        await expectError(.forbidden) { try await limited.call("room.join", room: "mine", ["create": ["title": "x"]]) }
        try await alice.call("room.create", room: "here", ["seatCount": 2])
        await expectError(.roomExists) { try await alice.call("room.create", room: "here") }
        await expectError(.notInRoom) { try await limited.call("seat.take", room: "here") }
        try await limited.call("room.join", room: "here")
        await expectError(.seatOutOfRange) { try await limited.call("seat.take", room: "here", ["index": 2]) }
        await expectError(.notSeated) { try await limited.call("seat.leave", room: "here") }
        await expectError(.badRequest) { try await limited.call("seat.switch", room: "here") }

        let roomBound = try await TestClient.connect(server.url)
        _ = try await roomBound.request("hello", ["token": .string(server.token("bound", room: "elsewhere"))])
        await expectError(.forbidden) { try await roomBound.call("room.join", room: "here") }
        // join with create args creates the room when missing.
        let created = try await alice.call("room.join", room: "fresh", ["create": ["title": "Fresh", "seatCount": 3]])
        #expect(created["room"]?["seatCount"] == 3)
    }

    @Test func endingARoomTellsEveryoneAndForgetsIt() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let owner = try await TestClient.signedIn(server, user: "owner")
        let guest = try await TestClient.signedIn(server, user: "guest")
        try await owner.call("room.create", room: "short")
        try await guest.call("room.join", room: "short")
        await expectError(.forbidden) { try await guest.call("room.end", room: "short") }
        try await owner.call("room.end", room: "short")
        #expect(try await guest.event("room.ended")["data"]?["reason"] == "ended")
        await expectError(.roomNotFound) { try await guest.call("room.join", room: "short") }
    }

    @Test func byeLeavesEveryRoom() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let owner = try await TestClient.signedIn(server, user: "owner")
        let guest = try await TestClient.signedIn(server, user: "guest")
        try await owner.call("room.create", room: "a")
        try await owner.call("room.create", room: "b")
        try await guest.call("room.join", room: "a")
        try await guest.call("room.join", room: "b")
        try await guest.call("seat.take", room: "a")
        #expect(try await guest.request("bye")["ok"] == true)
        try await owner.event("member.left") { $0["room"] == "a" && $0["data"]?["user"] == "guest" }
        try await owner.event("member.left") { $0["room"] == "b" && $0["data"]?["user"] == "guest" }
        #expect(try await guest.closed() == 1000)
    }

    @Test func membershipListUpdateRoleAndTransfer() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let owner = try await TestClient.signedIn(server, user: "owner")
        try await owner.call("room.create", room: "m")
        var guests: [TestClient] = []
        for index in 0..<5 {
            let guest = try await TestClient.signedIn(server, user: "g\(index)")
            try await guest.call("room.join", room: "m")
            guests.append(guest)
        }
        let page = try await guests[0].call("member.list", room: "m", ["limit": 3])
        #expect(page["members"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["owner", "g0", "g1"])
        let rest = try await guests[0].call("member.list", room: "m", ["after": page["next"]!, "limit": 10])
        #expect(rest["members"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["g2", "g3", "g4"])
        #expect(rest["next"] == nil)
        try await guests[1].call("member.update", room: "m", ["name": "Layla", "avatar": "https://cdn.example/l.png"])
        let updated = try await owner.event("member.updated")
        #expect(updated["data"]?["member"]?["name"] == "Layla")
        try await owner.call("member.transferOwner", room: "m", ["user": "g2"])
        let room = try await guests[0].event("room.updated")
        #expect(room["data"]?["room"]?["owner"] == "g2")
        #expect(try await owner.call("room.sync", room: "m")["me"]?["role"] == "admin")
    }

    @Test func seatInviteAndLockAndSwitch() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let owner = try await TestClient.signedIn(server, user: "owner")
        let guest = try await TestClient.signedIn(server, user: "guest")
        try await owner.call("room.create", room: "s", ["mode": "request"])
        try await guest.call("room.join", room: "s")
        try await owner.call("seat.invite", room: "s", ["user": "guest", "index": 2])
        let invite = try await guest.event("seat.invited")
        try await guest.call("seat.inviteReply", room: "s", ["inviteId": invite["data"]!["inviteId"]!, "accept": true])
        #expect(try await owner.event("seat.inviteReplied")["data"]?["accept"] == true)
        try await owner.call("seat.lock", room: "s", ["index": 3, "locked": true])
        await expectError(.seatLocked) { try await guest.call("seat.switch", room: "s", ["to": 3]) }
        try await guest.call("seat.switch", room: "s", ["to": 4])
        await expectError(.seatOccupied) { try await owner.call("seat.lock", room: "s", ["index": 4, "locked": true]) }
        try await owner.call("seat.lock", room: "s", ["index": 4, "locked": true, "kick": true])
        let sync = try await guest.call("room.sync", room: "s")
        #expect(sync["me"]?["seat"] == nil)
        #expect(sync["seats"]?.arrayValue?[4]["state"] == "locked")
        try await owner.call("room.update", room: "s", ["title": "Renamed", "mode": "free"])
        #expect(try await guest.event("room.updated") { $0["data"]?["room"]?["title"] == "Renamed" }["data"]?["room"]?["mode"] == "free")
        try await guest.call("seat.take", room: "s")
        try await owner.call("seat.kick", room: "s", ["index": 0])
        #expect(try await guest.call("room.sync", room: "s")["me"]?["seat"] == nil)
    }
}
