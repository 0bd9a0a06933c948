import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import MajlisTransport
import Testing

/// Webhooks through a real HTTP receiver that fails, hangs, goes down and comes back: every event
/// arrives, in order per room, signed, and a duplicate only ever as a retry with the same id.
@Suite struct WebhookTests {
    /// The events of `room` the receiver got, in the order they first arrived.
    static func events(_ receiver: WebhookReceiver, room: String) -> [JSONValue] {
        receiver.events.filter { $0["room"]?.stringValue == room }
    }

    static func expectInOrder(_ events: [JSONValue], sourceLocation: SourceLocation = #_sourceLocation) {
        let seqs = events.compactMap { $0["seq"]?.intValue }
        #expect(seqs == Array(1...Int64(max(seqs.count, 1))).prefix(seqs.count).map { $0 }, "\(seqs)", sourceLocation: sourceLocation)
    }

    @Test(.timeLimit(.minutes(3))) func everyEventArrivesOnceInOrderThroughFailuresAndHangs() async throws {
        let secret = TestServer.newSecret()
        let receiver = try WebhookReceiver(secret: secret)
        defer { receiver.stop() }
        receiver.mode = .fail(503)
        let server = try TestServer(secret: secret) { config in
            config.webhooks.endpoints = [receiver.url]
            config.webhooks.timeout = 1
            config.webhooks.firstRetry = 50
            config.webhooks.longestRetry = 400
            config.webhooks.includeChat = true
        }
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        let guest = try await TestClient.signedIn(server, user: "guest")
        try await host.call("room.create", room: "w")
        try await guest.call("room.join", room: "w")
        try await guest.call("seat.take", room: "w", ["index": 1])
        try await host.call("chat.send", room: "w", ["text": "salaam", "clientMsgId": "c1"])
        #expect(try await ServerAPITests.call(server, "POST", "/v1/rooms/w/seats/1/mute", #"{"muted":true}"#).status == 200)
        // Failing: each event is retried, and nothing after it in its room goes first.
        #expect(await eventually { receiver.posts.count >= 4 })
        #expect(Set(receiver.posts.map(\.id)).count == 1, "only the room's first event is tried while it fails")
        try await host.call("member.kick", room: "w", ["user": "guest", "banSeconds": 60])
        // Hanging: posts time out and are made again with the same id.
        receiver.mode = .hang
        let failedSoFar = receiver.posts.count
        #expect(await eventually { receiver.posts.count >= failedSoFar + 2 })
        // Back: the held posts are answered late, and everything else follows, in order.
        receiver.mode = .accept
        try await host.call("room.end", room: "w")
        let expected = [
            "room.started", "member.joined", "member.joined", "seat.taken", "chat.message", "seat.muted", "member.kicked", "seat.left",
            "member.left", "member.left", "room.ended",
        ]
        #expect(await eventually { Self.events(receiver, room: "w").count == expected.count && (try? server.server.store.webhookQueueDepth()) == 0 })
        let events = Self.events(receiver, room: "w")
        #expect(events.map { $0["type"]?.stringValue ?? "" } == expected)
        Self.expectInOrder(events)
        #expect(events[1]["data"]?["user"] == "host" && events[2]["data"]?["user"] == "guest")
        #expect(events[3]["data"] == ["index": 1, "user": "guest"])
        #expect(events[4]["data"]?["text"] == "salaam")
        #expect(events[6]["data"]?["by"] == "host" && events[6]["data"]?["until"] != nil)
        #expect(events[8]["data"] == ["user": "guest", "reason": "kicked"] && events[9]["data"] == ["user": "host", "reason": "ended"])
        // Every post signed; every repeat a retry of the same event, byte for byte.
        let posts = receiver.posts
        #expect(posts.filter { !$0.signatureValid }.isEmpty)
        #expect(posts.count > events.count)
        for post in posts { #expect(events.first { $0["id"]?.stringValue == post.id } == post.body) }
        // The operator's view: all delivered, each after at least one failed attempt for the first.
        let listed = try await ServerAPITests.call(server, "GET", "/v1/webhooks/events?room=w&limit=50")
        let records = listed.body["events"]?.arrayValue ?? []
        #expect(records.count == expected.count && records.allSatisfy { $0["state"] == "delivered" } && listed.body["queueDepth"] == 0)
        #expect((records.first?["attempts"]?.intValue ?? 0) > 1)
        // A replay posts the event again with the same id.
        let first = try #require(records.first?["id"]?.stringValue)
        let before = receiver.posts.count
        #expect(try await ServerAPITests.call(server, "POST", "/v1/webhooks/events/\(first)/replay").status == 200)
        #expect(await eventually { receiver.posts.count == before + 1 })
        #expect(receiver.posts.last?.id == first)
    }

    @Test(.timeLimit(.minutes(3))) func nothingIsLostWhenTheReceiverIsDownAndTheServerIsKilled() async throws {
        let secret = TestServer.newSecret()
        let receiver = try WebhookReceiver(secret: secret)
        defer { receiver.stop() }
        receiver.down()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-webhooks-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = [
            "serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", directory, "--keys",
            "\(TestServer.key):\(secret)", "--webhook", receiver.url, "--webhook-chat", "--webhook-timeout", "2",
        ]
        var process = try await MajlisProcess.start(arguments: arguments)
        let owner = try await TestClient.connect(process.url)
        _ = try await owner.request("hello", ["token": .string(TestServer.token("owner", secret: secret))])
        try await owner.call("room.create", room: "k")
        var members: [TestClient] = []
        for index in 0..<5 {
            let member = try await TestClient.connect(process.url)
            _ = try await member.request("hello", ["token": .string(TestServer.token("m\(index)", secret: secret))])
            try await member.call("room.join", room: "k")
            try await member.call("chat.send", room: "k", ["text": .string("m\(index)"), "clientMsgId": "c"])
            members.append(member)
        }
        // 1 start + 6 joins + 5 messages, all acknowledged; then the process dies without a word.
        let total = 12
        process.kill()
        try receiver.up()
        process = try await MajlisProcess.start(arguments: arguments)
        defer { process.terminate() }
        #expect(await eventually(within: 60) { Self.events(receiver, room: "k").count == total })
        let events = Self.events(receiver, room: "k")
        #expect(events.map { $0["type"]?.stringValue ?? "" } == ["room.started", "member.joined"] + Array(repeating: ["member.joined", "chat.message"], count: 5).flatMap { $0 })
        Self.expectInOrder(events)
        #expect(receiver.posts.filter { !$0.signatureValid }.isEmpty)
    }

    /// The Python example of docs/webhooks.md, run as written on a real post: it accepts the
    /// post and refuses it with one byte changed.
    @Test func theDocumentedPythonCheckAcceptsRealPosts() async throws {
        let secret = TestServer.newSecret()
        let receiver = try WebhookReceiver(secret: secret)
        defer { receiver.stop() }
        let server = try TestServer(secret: secret) { $0.webhooks.endpoints = [receiver.url] }
        defer { server.destroy() }
        _ = try await ServerAPITests.call(server, "POST", "/v1/rooms", #"{"id":"doc","title":"عربي"}"#)
        #expect(await eventually { !receiver.posts.isEmpty })
        let post = try #require(receiver.posts.first)
        let page = try String(contentsOfFile: ServerAPITests.document.replacingOccurrences(of: "openapi.yaml", with: "webhooks.md"), encoding: .utf8)
        let example = try #require(page.components(separatedBy: "```python\n").dropFirst().first?.components(separatedBy: "```").first)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-doc-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(post.raw.utf8).write(to: URL(fileURLWithPath: folder + "/body"))
        let script = example + """

            import sys
            body = open(sys.argv[1], "rb").read()
            headers = {"Majlis-Signature": sys.argv[2]}
            print(verify(headers, body, sys.argv[3].encode()), verify(headers, body[:-1] + b" ", sys.argv[3].encode()))
            """
        try script.write(toFile: folder + "/check.py", atomically: true, encoding: .utf8)
        let status = try await offPool {
            try ChildProcess.run(["/usr/bin/python3", folder + "/check.py", folder + "/body", post.signature, server.secret], output: folder + "/out")
        }
        #expect(status == 0)
        #expect((try? String(contentsOfFile: folder + "/out", encoding: .utf8)) == "True False\n")
    }

    /// An app backend in another language (Python, from the documents alone) drives rooms through
    /// the API and receives every webhook, in order, across a receiver outage and a `kill -9`.
    @Test(.timeLimit(.minutes(3))) func aPythonBackendGetsEveryEventInOrder() async throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Backend/backend.py").path
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-backend-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let status = try await offPool {
            try ChildProcess.run(["/bin/sh", "-c", #"exec python3 "$0" "$1" 2>&1"#, script, MajlisProcess.executable.path], output: output)
        }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(status == 0 && text.hasPrefix("ok: 13 events in order"), "\(text)")
    }

    @Test func retriesBackOffWithJitterUntilTheRetentionTime() {
        let retry = WebhookRetry(retention: 86_400_000)
        #expect(retry.delay(afterFailures: 1, random: 0) == 500 && retry.delay(afterFailures: 1, random: 1) == 1_000)
        #expect(retry.delay(afterFailures: 2, random: 1) == 2_000 && retry.delay(afterFailures: 5, random: 0.5) == 12_000)
        #expect(retry.delay(afterFailures: 30, random: 1) == 600_000)
        #expect(retry.next(afterFailures: 3, created: 0, now: 1_000, random: 0) == 3_000)
        #expect(retry.next(afterFailures: 9, created: 0, now: 86_300_000, random: 1) == nil)
    }

    @Test func signaturesVerifyOnlyForTheirBodyKeyAndTime() {
        let body = #"{"id":"ev_1","type":"room.started"}"#
        let header = WebhookSignature.header(body: body, secret: "s3cret", time: 1_000)
        #expect(header.hasPrefix("t=1000,v1=") && header.count == 10 + 64)
        #expect(WebhookSignature.verify(header: header, body: body, secret: "s3cret", now: 1_100))
        #expect(!WebhookSignature.verify(header: header, body: body + " ", secret: "s3cret", now: 1_100))
        #expect(!WebhookSignature.verify(header: header, body: body, secret: "other", now: 1_100))
        #expect(!WebhookSignature.verify(header: header, body: body, secret: "s3cret", now: 2_000))
        #expect(!WebhookSignature.verify(header: "garbage", body: body, secret: "s3cret", now: 1_000))
    }
}
