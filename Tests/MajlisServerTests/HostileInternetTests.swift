import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import MajlisTransport
import Testing

/// The second round of attacks from the internet, each against a real server on loopback: no
/// frame, stored message or slow upload stops the service, no idempotency key or address can be
/// borrowed, no foreign page gets in.
@Suite(.serialized) struct HostileInternetTests {
    func errorCode(_ answer: JSONValue) -> String? { answer["error"]?["code"]?.stringValue }

    static func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }

    static func nestedValue(_ depth: Int) -> JSONValue {
        var value = JSONValue.array([])
        for _ in 1..<depth { value = .array([value]) }
        return value
    }

    /// A frame nested 500 deep is refused by its depth, and before `hello` any refused frame
    /// closes the connection; members already in go on.
    @Test func deepFramesAreRefusedAndCloseAConnectionBeforeHello() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let member = try await TestClient.signedIn(server, user: "member")
        try await member.call("room.create", room: "r")
        var attackers: [TestClient] = []
        for _ in 0..<8 {
            let attacker = try await TestClient.connect(server.url)
            attacker.sendRaw(Self.nested(500))
            attackers.append(attacker)
        }
        for attacker in attackers {
            let answer = try await attacker.response(to: nil)
            #expect(errorCode(answer) == "bad_request")
            #expect(answer["error"]?["message"]?.stringValue?.contains("nested deeper than 32 levels") == true, "\(answer)")
            #expect(try await attacker.closed() == 4001)
        }
        let garbage = try await TestClient.connect(server.url)
        garbage.sendRaw("{\"id\": 1, \"op\": ")
        #expect(try await garbage.closed() == 4001)
        // After hello a bad frame is answered and the connection stays.
        member.sendRaw(Self.nested(100))
        #expect(errorCode(try await member.response(to: nil)) == "bad_request")
        #expect(try await member.call("room.sync", room: "r")["room"]?["id"] == "r")
        // A frame of more values than any request needs is refused by their count.
        let many = #"{"id": 900, "op": "ping", "args": {"x": ["# + Array(repeating: "[1]", count: 3_000).joined(separator: ",") + "]}}"
        member.sendRaw(many)
        let counted = try await member.response(to: 900)
        #expect(errorCode(counted) == "bad_request" && counted["error"]?["message"]?.stringValue?.contains("more than 4096 values") == true, "\(counted)")
    }

    /// A large frame is read off the service thread, and the small ones after it wait their
    /// turn: a connection's requests are carried out in the order sent.
    @Test func framesAreCarriedOutInOrderWhateverTheirSize() async throws {
        // 160 KB of attribute changes in a few seconds: past the room-wide budget, which is not
        // what this test is about.
        let server = try TestServer { $0.roomLimits.broadcastBurstBytes = 1 << 20 }
        defer { server.destroy() }
        let member = try await TestClient.signedIn(server, user: "member")
        try await member.call("room.create", room: "r")
        let large = String(repeating: "l", count: 8_000)
        for round in 0..<20 {
            member.sendRaw(#"{"id": \#(1_000 + 2 * round), "op": "attr.set", "args": {"room": "r", "attrs": {"k": "\#(large)"}}}"#)
            member.sendRaw(#"{"id": \#(1_001 + 2 * round), "op": "attr.set", "args": {"room": "r", "attrs": {"k": "small \#(round)"}}}"#)
            let first = try await member.response(to: Int64(1_000 + 2 * round))
            let second = try await member.response(to: Int64(1_001 + 2 * round))
            #expect(first["ok"] == true && second["ok"] == true)
            let attributes = try await member.call("room.sync", room: "r")["attributes"]
            #expect(attributes?["k"]?["value"] == .string("small \(round)"), "round \(round)")
        }
    }

    /// A chat payload nested past the limit is refused on the way in; one within it is kept and
    /// read back intact; one stored deep by an earlier server costs nothing on the way out.
    @Test func storedPayloadsAreCheckedOnTheWayIn() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let member = try await TestClient.signedIn(server, user: "member")
        try await member.call("room.create", room: "r")
        let deep = try await member.request("chat.send", ["room": "r", "clientMsgId": "c1", "payload": Self.nestedValue(500)])
        #expect(errorCode(deep) == "bad_request")
        let fine = Self.nestedValue(20)
        try await member.call("chat.send", room: "r", ["clientMsgId": "c2", "payload": fine])
        // Planted as a server before this one would have stored it.
        try server.server.store.insertChat(
            room: "r", message: ChatMessage(msgId: 100, from: UserRef(id: "old", name: "Old"), type: "text", text: "old", payload: Self.nestedValue(500), ts: 1),
            clientMsgId: "old")
        let history = try await member.call("chat.history", room: "r")
        let messages = history["messages"]?.arrayValue ?? []
        #expect(messages.contains { $0["payload"] == fine })
        #expect(messages.contains { $0["text"] == "old" && $0["payload"] == nil })
        let api = try await ServerAPITests.call(server, "GET", "/v1/rooms/r/chat")
        #expect(api.status == 200)
        // The room's queue is free for everyone else.
        try await member.call("seat.take", room: "r", ["index": 0])
    }

    /// A NUL in chat text (or any stored string) is refused: what is stored is what was seen.
    @Test func aNULInATextIsRefused() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let member = try await TestClient.signedIn(server, user: "member")
        try await member.call("room.create", room: "r")
        let chat = try await member.request("chat.send", ["room": "r", "clientMsgId": "c1", "text": "hello\u{0} I am the admin"])
        #expect(errorCode(chat) == "bad_request")
        let title = try await member.request("room.update", ["room": "r", "title": "a\u{0}b"])
        #expect(errorCode(title) == "bad_request")
        let attribute = try await member.request("attr.set", ["room": "r", "attrs": ["k": "v\u{0}w"]])
        #expect(errorCode(attribute) == "bad_request")
        #expect(try await member.call("chat.history", room: "r")["messages"] == [])
        // A NUL inside a payload is kept exactly, escaped.
        try await member.call("chat.send", room: "r", ["clientMsgId": "c2", "type": "gift", "payload": ["note": "a\u{0}b"]])
        #expect(try await member.call("chat.history", room: "r")["messages"]?.arrayValue?.first?["payload"] == ["note": "a\u{0}b"])
    }

    /// Two Content-Length headers are answered 400 and the connection closed: what follows is
    /// never run as a request of its own.
    @Test func twoContentLengthsAreRefused() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let smuggled = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        let response = try RawHTTP.exchange(
            port: server.server.port,
            "POST /v1/rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nContent-Length: \(smuggled.utf8.count)\r\n\r\n" + smuggled)
        #expect(RawHTTP.statuses(response) == [400], "\(response)")
        let bad = try RawHTTP.exchange(port: server.server.port, "POST /v1/rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1e3\r\n\r\n")
        #expect(RawHTTP.statuses(bad) == [400])
    }

    /// One address holds at most its limit of connections of any kind; a body that trickles is
    /// cut off at the request deadline; a body the caller may not send is answered for what it
    /// is (401) without being kept, whatever its size.
    @Test func slowBodiesCannotHoldTheServer() async throws {
        let server = try TestServer {
            $0.maxConnectionsPerAddress = 8
            $0.requestSeconds = 2
        }
        defer { server.destroy() }
        let port = server.server.port
        var slow: [RawHTTP] = []
        for _ in 0..<(8 + SignalingServer.httpAllowance) {
            let connection = try RawHTTP(port: port, timeout: 60)
            connection.send("POST /v1/rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\nx")
            slow.append(connection)
        }
        // One more is hung up at once, unanswered.
        #expect(RawHTTP.statuses(try RawHTTP.exchange(port: port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")) == [])
        // Trickling does not keep them: each is answered 408 (or closed) once past the deadline.
        let trickling = slow[0]
        let ended = await eventually(within: 120) {
            trickling.send("y")
            var buffer = [UInt8](repeating: 0, count: 1)
            return recv(trickling.descriptor, &buffer, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0  // an answer, or closed
        }
        #expect(ended)
        #expect(await eventually(within: 120) {
            (try? RawHTTP.statuses(RawHTTP.exchange(port: port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))) == [200]
        })
        slow.removeAll()
        // Over the size limit, and not signed: the refusal is the missing token.
        let body = String(repeating: "z", count: 2_000_000)
        let unsigned = try RawHTTP.exchange(port: port, "POST /v1/rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
        #expect(RawHTTP.statuses(unsigned) == [401], "\(unsigned.prefix(200))")
        let page = try RawHTTP.exchange(port: port, "POST /console HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello")
        #expect(RawHTTP.statuses(page) == [405])
    }

    /// An idempotency key belongs to its caller, room and op: the same key in another room acts,
    /// another token's key is its own, and a member's `rid` never answers for the API.
    @Test func idempotencyKeysCannotBeBorrowed() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let owner = try await TestClient.signedIn(server, user: "owner")
        let guest = try await TestClient.signedIn(server, user: "guest")
        for room in ["a", "b"] {
            try await owner.call("room.create", room: room)
            try await guest.call("room.join", room: room)
        }
        let first = try await ServerAPITests.call(server, "POST", "/v1/rooms/a/members/guest/kick", "{}", headers: ["Idempotency-Key": "K"])
        #expect(first.status == 200)
        let second = try await ServerAPITests.call(server, "POST", "/v1/rooms/b/members/guest/kick", "{}", headers: ["Idempotency-Key": "K"])
        #expect(second.status == 200)
        let members = try await ServerAPITests.call(server, "GET", "/v1/rooms/b/members")
        #expect(members.body["members"]?.arrayValue?.contains { $0["id"] == "guest" } == false, "the second kick happened")

        // Two room-scoped tokens, one key: two messages.
        let tokenA = ServerAPITests.adminToken(server, room: "a")
        let tokenB = ServerAPITests.adminToken(server, room: "b")
        let postA = try await ServerAPITests.call(server, "POST", "/v1/rooms/a/chat", #"{"text":"to a"}"#, token: tokenA, headers: ["Idempotency-Key": "M"])
        let postB = try await ServerAPITests.call(server, "POST", "/v1/rooms/b/chat", #"{"text":"to b"}"#, token: tokenB, headers: ["Idempotency-Key": "M"])
        #expect(postA.status == 200 && postB.status == 200)
        let historyB = try await owner.call("chat.history", room: "b")
        #expect(historyB["messages"]?.arrayValue?.contains { $0["text"] == "to b" } == true)

        // A member's rid shaped like the API's key.
        try await owner.call("chat.send", room: "a", ["clientMsgId": "m1", "text": "from a member"], rid: "api:Z")
        let post = try await ServerAPITests.call(server, "POST", "/v1/rooms/a/chat", #"{"text":"from the backend"}"#, headers: ["Idempotency-Key": "Z"])
        #expect(post.status == 200)
        let historyA = try await owner.call("chat.history", room: "a")
        #expect(historyA["messages"]?.arrayValue?.contains { $0["text"] == "from the backend" } == true)
        // The same key again in the same room is still answered as the first time.
        let again = try await ServerAPITests.call(server, "POST", "/v1/rooms/a/chat", #"{"text":"from the backend"}"#, headers: ["Idempotency-Key": "Z"])
        #expect(again.body == post.body)
    }

    /// In development mode a foreign `Host` (DNS rebinding) gets nothing; every answer carries
    /// the headers that keep it from being framed or sniffed; a WebSocket from a foreign page's
    /// origin is refused.
    @Test func foreignPagesAndNamesGetNothing() async throws {
        let server = try TestServer {
            $0.developmentKey = TestServer.key
            $0.webDirectory = BrowserTests.web
        }
        defer { server.destroy() }
        let port = server.server.port
        let rebound = try RawHTTP.exchange(port: port, "GET /v1/dev/token?admin=1 HTTP/1.1\r\nHost: attacker.example:\(port)\r\nConnection: close\r\n\r\n")
        #expect(RawHTTP.statuses(rebound) == [403])
        #expect(!rebound.contains("token\""))
        for host in ["127.0.0.1:\(port)", "localhost:\(port)"] {
            let own = try RawHTTP.exchange(port: port, "GET /v1/dev/token HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
            #expect(RawHTTP.statuses(own) == [200], "\(host)")
        }
        let page = try RawHTTP.exchange(port: port, "GET /console HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n").lowercased()
        #expect(page.contains("content-security-policy: default-src 'self'") && page.contains("frame-ancestors 'none'"))
        #expect(page.contains("x-content-type-options: nosniff") && page.contains("x-frame-options: deny") && page.contains("referrer-policy:"))
        let api = try RawHTTP.exchange(port: port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n").lowercased()
        #expect(api.contains("content-security-policy: default-src 'none'") && api.contains("x-content-type-options: nosniff"))

        func upgrade(origin: String?) throws -> [Int] {
            let originLine = origin.map { "Origin: \($0)\r\n" } ?? ""
            let connection = try RawHTTP(port: port, timeout: 10)
            connection.send(
                "GET /v1/signal HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" + originLine
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(connection.descriptor, &buffer, buffer.count, 0)
            return RawHTTP.statuses(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self))
        }
        #expect(try upgrade(origin: "http://127.0.0.1:\(port)") == [101])
        #expect(try upgrade(origin: nil) == [101])
        #expect(try upgrade(origin: "http://attacker.example") != [101])
    }

    /// A room handed over counts against the receiver's rooms; one user is in a bounded number
    /// of rooms at once, and owns a bounded share of a room's attributes.
    @Test func limitsOnTransfersRoomsAndAttributes() async throws {
        let server = try TestServer {
            $0.maxRoomsPerUser = 2
            $0.maxRoomsPerConnection = 3
        }
        defer { server.destroy() }
        let giver = try await TestClient.signedIn(server, user: "giver")
        let receiver = try await TestClient.signedIn(server, user: "receiver")
        try await receiver.call("room.create", room: "mine1")
        try await receiver.call("room.create", room: "mine2")
        try await giver.call("room.create", room: "gift")
        try await receiver.call("room.join", room: "gift")
        let transfer = try await giver.request("member.transferOwner", ["room": "gift", "user": "receiver"])
        #expect(errorCode(transfer) == "forbidden" && transfer["error"]?["message"]?.stringValue?.contains("owns 2 rooms") == true, "\(transfer)")
        #expect(try await giver.call("room.sync", room: "gift")["room"]?["owner"] == "giver")
        // Who may not hand the room over hears that, not the receiver's count of rooms.
        let bystander = try await TestClient.signedIn(server, user: "bystander")
        try await bystander.call("room.join", room: "gift")
        let notOwner = try await bystander.request("member.transferOwner", ["room": "gift", "user": "receiver"])
        #expect(notOwner["error"]?["message"]?.stringValue?.contains("only the owner") == true, "\(notOwner)")
        // A member who refused is never handed the room, whatever it owns.
        try await bystander.call("member.update", room: "gift", ["refuseOwnership": true])
        let declined = try await giver.request("member.transferOwner", ["room": "gift", "user": "bystander"])
        #expect(errorCode(declined) == "forbidden" && declined["error"]?["message"]?.stringValue?.contains("refused") == true, "\(declined)")
        let members = try await giver.call("member.list", room: "gift")["members"]?.arrayValue ?? []
        #expect(members.first { $0["id"] == "bystander" }?["refusesOwnership"] == true)
        try await bystander.call("member.update", room: "gift", ["refuseOwnership": false])
        try await giver.call("member.transferOwner", room: "gift", ["user": "bystander"])
        #expect(try await giver.call("room.sync", room: "gift")["room"]?["owner"] == "bystander")

        let third = try await receiver.request("room.create", ["room": "mine3"])
        #expect(errorCode(third) == "forbidden")
        try await giver.call("room.create", room: "g2")
        let fourth = try await receiver.request("room.join", ["room": "g2"])
        #expect(errorCode(fourth) == "forbidden" && fourth["error"]?["message"]?.stringValue?.contains("3 rooms") == true, "\(fourth)")

        let value = String(repeating: "v", count: 8_000)
        var refused: JSONValue?
        for key in 0..<12 {
            let answer = try await receiver.request("attr.set", ["room": "mine1", "attrs": ["k\(key)": .string(value)]])
            if answer["ok"] != true {
                refused = answer
                break
            }
        }
        #expect(refused.map(errorCode) == "too_large")
        // What is owned can still be deleted.
        try await receiver.call("attr.delete", room: "mine1", ["keys": ["k0"]])
    }

    /// Offers are rate-limited per connection, and one with more media sections than the room
    /// has seats (and a microphone) is refused before it is parsed.
    @Test func renegotiationIsBounded() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let member = try await TestClient.signedIn(server, user: "member")
        try await member.call("room.create", room: "r", ["seatCount": 4])
        let section = "m=audio 9 UDP/TLS/RTP/SAVPF 111\na=mid:%d\na=rtcp-mux\na=rtpmap:111 opus/48000/2\n"
        let many = "v=0\no=- 1 2 IN IP4 127.0.0.1\ns=-\nt=0 0\n" + (0..<500).map { String(format: section, $0) }.joined()
        let refused = try await member.request("webrtc.offer", ["room": "r", "sdp": .string(many)])
        #expect(errorCode(refused) == "bad_request")
        #expect(refused["error"]?["message"]?.stringValue?.contains("at most 5") == true, "\(refused)")
        var limited = false
        for _ in 0..<12 where !limited {
            limited = errorCode(try await member.request("webrtc.offer", ["room": "r", "sdp": "v=0\r\n"])) == "rate_limited"
        }
        #expect(limited)
    }
}
