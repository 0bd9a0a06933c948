import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import MajlisTransport
import Testing

@Suite(.serialized) struct SessionTests {
    func errorCode(_ answer: JSONValue) -> String? { answer["error"]?["code"]?.stringValue }

    @Test func helloAnswersWithSessionAndLimits() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let client = try await TestClient.connect(server.url)
        let answer = try await client.request("hello", ["token": .string(server.token("alice")), "client": ["sdk": "test", "version": "1", "platform": "linux"]])
        #expect(answer["ok"] == true)
        #expect(answer["data"]?["user"]?["id"] == "alice")
        #expect(answer["data"]?["heartbeat"] == 20)
        #expect(answer["data"]?["session"]?.stringValue?.isEmpty == false)
        #expect(answer["data"]?["expiresAt"]?.intValue != nil)
        let ping = try await client.request("ping")
        #expect(ping["data"]?["t"]?.intValue != nil)
    }

    @Test func badTokensAreRefusedAndClosedWith4001() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let now = Int64(Date().timeIntervalSince1970)
        let cases: [(String, String)] = [
            ("not-a-jwt", "unauthorized"),
            (AccessToken.sign(AccessClaims(sub: "a", exp: now + 60), key: TestServer.key, secret: "wrong"), "unauthorized"),
            (AccessToken.sign(AccessClaims(sub: "a", exp: now + 60), key: "otherkey", secret: server.secret), "unauthorized"),
            (AccessToken.sign(AccessClaims(sub: "a", exp: now - 1), key: TestServer.key, secret: server.secret), "token_expired"),
            (AccessToken.sign(AccessClaims(sub: "a", exp: now + 600, nbf: now + 300), key: TestServer.key, secret: server.secret), "unauthorized"),
            (AccessToken.sign(AccessClaims(sub: "bad user!", exp: now + 60), key: TestServer.key, secret: server.secret), "unauthorized"),
            (Self.unsignedToken(alg: "none"), "unauthorized"),
            (Self.unsignedToken(alg: "HS512"), "unauthorized"),
        ]
        for (token, code) in cases {
            let client = try await TestClient.connect(server.url)
            let answer = try await client.request("hello", ["token": .string(token)])
            #expect(errorCode(answer) == code, "\(token)")
            #expect(try await client.closed() == 4001)
        }
    }

    static func unsignedToken(alg: String) -> String {
        func b64(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        let exp = Int64(Date().timeIntervalSince1970) + 60
        return b64(#"{"alg":"\#(alg)","kid":"\#(TestServer.key)"}"#) + "." + b64(#"{"sub":"a","exp":\#(exp)}"#) + ".c2ln"
    }

    @Test func tokenFromAStandardJWTLibraryVerifies() async throws {
        // PyJWT is installed by scripts/test; it is the independent judge here.
        let server = try TestServer()
        defer { server.destroy() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import jwt, time
            print(jwt.encode({"sub": "py.user", "name": "Py", "exp": int(time.time()) + 600, "grants": {"create": True}}, \
            "\(server.secret)", algorithm="HS256", headers={"kid": "\(TestServer.key)"}))
            """]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let token = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(process.waitForExit() == 0, "python3 with PyJWT is needed (scripts/test installs it)")
        let client = try await TestClient.connect(server.url)
        let answer = try await client.request("hello", ["token": .string(token)])
        #expect(answer["ok"] == true)
        #expect(answer["data"]?["user"] == ["id": "py.user", "name": "Py"])
    }

    @Test func anythingBeforeHelloCloses4001() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let client = try await TestClient.connect(server.url)
        let answer = try await client.request("room.join", ["room": "r1"])
        #expect(errorCode(answer) == "unauthorized")
        #expect(try await client.closed() == 4001)
    }

    @Test func silentNewConnectionIsClosedAfterHelloTimeout() async throws {
        let clock = ManualClock(now: SystemClock().now())
        let server = try TestServer(clock: clock) { $0.helloTimeout = 10 }
        defer { server.destroy() }
        let client = try await TestClient.connect(server.url)
        // The server may open its side just after the client sees the handshake: time moves on
        // until the connection is gone, with no real wait for the timeout itself.
        let advancing = Task {
            while !Task.isCancelled {
                clock.advance(by: .seconds(11))
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        defer { advancing.cancel() }
        #expect(try await client.closed(timeout: 30) == 4001)
    }

    @Test func malformedFramesGetBadRequestAndTheConnectionStays() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let client = try await TestClient.signedIn(server, user: "alice")
        client.sendRaw("{nope")
        #expect(errorCode(try await client.response(to: nil)) == "bad_request")
        client.sendRaw(#"{"id": 5}"#)
        #expect(errorCode(try await client.response(to: 5)) == "bad_request")
        client.sendRaw(#"{"id": 6, "op": "warp.drive"}"#)
        #expect(errorCode(try await client.response(to: 6)) == "unsupported")
        client.sendRaw(#"{"id": 7, "op": "seat.take", "args": {"room": "r1", "index": "two"}}"#)
        #expect(errorCode(try await client.response(to: 7)) == "bad_request")
        client.sendRaw(#"[1, 2, 3]"#)
        #expect(errorCode(try await client.response(to: nil)) == "bad_request")
        #expect(try await client.request("ping")["ok"] == true)
        #expect(!client.isClosed)
    }

    @Test func framesOver64KiBClose1009() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let client = try await TestClient.signedIn(server, user: "alice")
        client.sendRaw(#"{"id":1,"op":"ping","args":{"pad":""# + String(repeating: "x", count: 70_000) + #""}}"#)
        #expect(try await client.closed() == 1009)
        // One that goes on and on is cut off without waiting for its end; the server carries on.
        let flooder = try await TestClient.signedIn(server, user: "bob")
        flooder.sendRaw(#"{"id":1,"op":"ping","args":{"pad":""# + String(repeating: "x", count: 3_000_000) + #""}}"#)
        _ = try await flooder.closed()
        #expect(try await TestClient.signedIn(server, user: "carol").request("ping")["ok"] == true)
    }

    @Test func aFrameJustUnderTheLimitIsFine() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let client = try await TestClient.signedIn(server, user: "alice")
        client.sendRaw(#"{"id":1,"op":"ping","args":{"pad":""# + String(repeating: "x", count: 60_000) + #""}}"#)
        #expect(try await client.response(to: 1)["ok"] == true)
    }

    @Test func aNewerConnectionReplacesTheOlder() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let first = try await TestClient.signedIn(server, user: "alice")
        try await first.call("room.create", room: "r1")
        let bob = try await TestClient.signedIn(server, user: "bob")
        try await bob.call("room.join", room: "r1")
        try await bob.call("chat.send", room: "r1", ["text": "before", "clientMsgId": "b1"])
        try await first.event("chat.message")
        let second = try await TestClient.signedIn(server, user: "alice")
        #expect(try await first.closed() == 4004)
        // The rooms carry over: the new connection is still a member, and hears the room's
        // broadcasts (not the connection they went to before).
        let snapshot = try await second.call("room.sync", room: "r1")
        #expect(snapshot["me"]?["role"] == "owner")
        try await bob.call("chat.send", room: "r1", ["text": "after", "clientMsgId": "b2"])
        #expect(try await second.event("chat.message")["data"]?["text"] == "after")
    }

    @Test func tokenExpiringAndRenew() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let client = try await TestClient.connect(server.url)
        let short = server.token("alice", ttl: 20)
        #expect(try await client.request("hello", ["token": .string(short)])["ok"] == true)
        let warning = try await client.event("token.expiring")
        #expect(warning["data"]?["expiresAt"]?.intValue != nil)
        let renewed = try await client.request("session.renew", ["token": .string(server.token("alice", ttl: 600))])
        #expect(renewed["data"]?["expiresAt"]?.intValue ?? 0 > warning["data"]?["expiresAt"]?.intValue ?? Int64.max)
        let other = try await client.request("session.renew", ["token": .string(server.token("mallory"))])
        #expect(errorCode(other) == "forbidden")
        let expiredToken = AccessToken.sign(AccessClaims(sub: "alice", exp: 1), key: TestServer.key, secret: server.secret)
        #expect(errorCode(try await client.request("session.renew", ["token": .string(expiredToken)])) == "token_expired")
    }

    @Test func anExpiredSessionIsClosed4001() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let client = try await TestClient.connect(server.url)
        #expect(try await client.request("hello", ["token": .string(server.token("alice", ttl: 2))])["ok"] == true)
        #expect(try await client.closed(timeout: 30) == 4001)
    }

    @Test func requestFloodIsRateLimited() async throws {
        let server = try TestServer { $0.requestsPerSecond = 5; $0.requestBurst = 10 }
        defer { server.destroy() }
        let client = try await TestClient.signedIn(server, user: "alice")
        for id in 1...15 { client.sendRaw(#"{"id":\#(id),"op":"ping"}"#) }
        var limited = 0
        for id in 1...15 where errorCode(try await client.response(to: Int64(id))) == "rate_limited" { limited += 1 }
        #expect(limited >= 4)
        #expect(!client.isClosed)
    }

    @Test func healthz() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.server.port)/healthz")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let health = try JSONDecoder().decode(JSONValue.self, from: data)
        #expect(health["status"] == "ok")
        #expect(health["store"] == "ok")
        // The forwarding thread is ordinary unless configured real-time.
        #expect(health["media"]?["realtime"] == false)
    }

    @Test func healthzSaysWhenTheStoreFails() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let address = URL(string: "http://127.0.0.1:\(server.server.port)/healthz")!
        func health() async throws -> JSONValue {
            try JSONDecoder().decode(JSONValue.self, from: try await URLSession.shared.data(from: address).0)
        }
        // A disk gone read-only: the next check (the sweeper's, every five seconds) finds it.
        try server.server.store.setReadOnly(true)
        server.server.store.check()
        let failing = try await health()
        #expect(failing["status"] == "degraded")
        #expect(failing["store"]?.stringValue?.contains("readonly") == true)
        try server.server.store.setReadOnly(false)
        server.server.store.check()
        let back = try await health()
        #expect(back["status"] == "ok")
        #expect(back["store"] == "ok")
    }

    @Test func aRealtimeForwarderIsRealtimeWhereTheProcessMayBe() async throws {
        let server = try TestServer { $0.mediaRealtime = true }
        defer { server.destroy() }
        let mayBeRealtime = await offPool { () -> Bool in
            defer { ThreadScheduling.setRealtime(false) }
            return ThreadScheduling.setRealtime(true)
        }
        #expect(await eventually {
            guard let (data, _) = try? await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.server.port)/healthz")!) else { return false }
            return (try? JSONDecoder().decode(JSONValue.self, from: data))?["media"]?["realtime"]?.boolValue == mayBeRealtime
        })
    }

    @Test func healthzCountsHowLongAnswersAndEventsTookToBeWritten() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        let guest = try await TestClient.signedIn(server, user: "guest")
        try await host.call("room.create", room: "r")
        try await guest.call("room.join", room: "r")
        try await guest.call("seat.take", room: "r", ["index": 0])
        try await host.event("seat.updated")
        func delays() async throws -> (answers: DelayHistogram, events: DelayHistogram, queued: DelayHistogram) {
            let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.server.port)/healthz")!)
            let signaling = try #require(try JSONDecoder().decode(JSONValue.self, from: data)["signaling"])
            let decoder = JSONValueDecoder()
            return (try decoder.decode(DelayHistogram.self, from: try #require(signaling["answers"]?["histogram"])),
                    try decoder.decode(DelayHistogram.self, from: try #require(signaling["events"]?["histogram"])),
                    try decoder.decode(DelayHistogram.self, from: try #require(signaling["queued"]?["histogram"])))
        }
        let before = try await delays()
        #expect(before.answers.count >= 5)  // two hellos, create, join, take
        #expect(before.events.count >= 2)  // the join and the seat, to the host at least
        #expect(before.queued.count == 3)  // the room ops: create, join, take
        // One more seat op: one more answer, and its seat.updated to both members.
        try await guest.call("seat.leave", room: "r")
        try await host.event("seat.updated") { $0["data"]?["seats"]?.arrayValue?.first?["user"] == nil }
        let after = try await delays()
        #expect(after.answers.subtracting(before.answers).count == 1)
        #expect(after.events.subtracting(before.events).count == 2)
        #expect(after.queued.subtracting(before.queued).count == 1)
    }

    /// Heartbeats on a test clock: a connection that has heard nothing from its peer for twice
    /// the heartbeat is closed 1001, at once, not after forty real seconds.
    @Test func aConnectionSilentForTwoHeartbeatsIsClosedOnTheServersClock() async throws {
        let monotonic = ManualClock(now: SystemClock().now())
        let server = try TestServer(monotonic: monotonic)
        defer { server.destroy() }
        let client = try await TestClient.signedIn(server, user: "alice")
        monotonic.advance(by: .seconds(2 * server.config.heartbeat + 1))
        #expect(try await client.closed(timeout: 10) == 1001)
    }

    @Test func gracefulStopTellsClients1001() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let client = try await TestClient.signedIn(server, user: "alice")
        server.stop()
        #expect(try await client.closed() == 1001)
    }

    /// `run()` serves until its task is cancelled, then stops as gracefully as `stop()` and
    /// returns: clients are told 1001 and what they did is in the store.
    @Test func runServesUntilCancelledThenStopsGracefully() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let serving = Task { try await server.server.run() }  // already started: it only serves
        let host = try await TestClient.signedIn(server, user: "host")
        try await host.call("room.create", room: "r")
        serving.cancel()
        try await serving.value
        #expect(try await host.closed() == 1001)
        #expect(try server.server.store.roomExists("r"), "the room is stored")
        server.server.stop()  // again: returns at once
    }
}
