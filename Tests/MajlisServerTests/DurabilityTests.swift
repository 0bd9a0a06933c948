import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

@Suite(.serialized) struct DurabilityTests {
    @Test func resumeWithinGraceKeepsTheSeatAndExpiryClearsIt() async throws {
        // The server's wall time stands still until the test moves it: a reconnect on a busy
        // machine can take any time and still be within the grace.
        let clock = ManualClock(now: SystemClock().now())
        let server = try TestServer(clock: clock) { $0.resumeGrace = 2 }
        defer { server.destroy() }
        let owner = try await TestClient.signedIn(server, user: "owner")
        try await owner.call("room.create", room: "r")
        let guest = try await TestClient.connect(server.url)
        let hello = try await guest.request("hello", ["token": .string(server.token("guest"))])
        let session = try #require(hello["data"]?["session"]?.stringValue)
        try await guest.call("room.join", room: "r")
        try await guest.call("seat.take", room: "r", ["index": 1])
        try await guest.call("attr.set", room: "r", ["attrs": ["guest.mood": "happy"], "deleteOnLeave": true])
        guest.disconnect()
        _ = try await guest.closed()

        let back = try await TestClient.connect(server.url)
        let resumed = try await back.request("hello", ["token": .string(server.token("guest")), "resume": .string(session)])
        #expect(resumed["data"]?["resumed"] == true)
        #expect(resumed["data"]?["session"]?.stringValue == session)
        #expect(resumed["data"]?["rooms"] == ["r"])
        let snapshot = try await back.call("room.sync", room: "r")
        #expect(snapshot["me"]?["seat"] == 1)
        #expect(snapshot["attributes"]?["guest.mood"]?["value"] == "happy")
        #expect(owner.pendingEvents.allSatisfy { $0["ev"] != "member.left" })

        back.disconnect()
        // Past the grace (however long the server takes to notice the drop), the member is gone.
        var left: JSONValue?
        for _ in 0..<120 where left == nil {
            clock.advance(by: .seconds(1))
            left = try? await owner.event("member.left", timeout: 0.5)
        }
        let expired = try #require(left)
        #expect(expired["data"] == ["user": "guest", "reason": "timeout"])
        let after = try await owner.call("room.sync", room: "r")
        #expect(after["seats"]?.arrayValue?[1]["state"] == "empty")
        #expect(after["attributes"]?["guest.mood"] == nil)
    }

    /// Rooms, bans and chat survive a restart; and, on PostgreSQL, a move of the data directory's
    /// store into it with `majlis migrate` between the two runs (nothing lost).
    @Test(arguments: StoreBackend.allCases) func roomsBansAndChatSurviveARestart(_ backend: StoreBackend) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-restart-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let server = try TestServer(dataDirectory: directory)
            let owner = try await TestClient.signedIn(server, user: "owner")
            let troll = try await TestClient.signedIn(server, user: "troll")
            try await owner.call("room.create", room: "keep", ["title": "Kept", "seatCount": 5, "mode": "request", "announcement": "hi"])
            try await troll.call("room.join", room: "keep")
            try await owner.call("seat.lock", room: "keep", ["index": 2, "locked": true])
            try await owner.call("seat.mute", room: "keep", ["index": 3, "muted": true])
            try await owner.call("member.kick", room: "keep", ["user": "troll", "banSeconds": 600])
            for index in 1...5 { try await owner.call("chat.send", room: "keep", ["text": .string("m\(index)"), "clientMsgId": .string("c\(index)")]) }
            try await owner.call("attr.set", room: "keep", ["attrs": ["topic": "قرآن", "mood": "calm"]])
            try await owner.call("attr.set", room: "keep", ["attrs": ["typing": "yes"], "deleteOnLeave": true])
            server.stop()
        }
        var postgres: String?
        if backend == .postgres {
            let url = try await backend.place()
            let output = directory + "-migrate.txt"
            defer { try? FileManager.default.removeItem(atPath: output) }
            let status = try ChildProcess.run([MajlisProcess.executable.path, "migrate", "--data", directory, "--postgres", url], output: output)
            let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            #expect(status == 0 && printed.contains("chat: 5 rows") && printed.contains("bans: 1 rows"), "\(printed)")
            postgres = url
            // From now on the data can only come from PostgreSQL.
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: "\(directory)/majlis.sqlite\(suffix)") }
        }
        let server = try TestServer(dataDirectory: directory) { $0.postgresURL = postgres }
        defer { server.stop() }
        let owner = try await TestClient.signedIn(server, user: "owner")
        let snapshot = try await owner.call("room.join", room: "keep")
        #expect(snapshot["room"]?["title"] == "Kept")
        #expect(snapshot["room"]?["mode"] == "request")
        #expect(snapshot["me"]?["role"] == "owner")
        #expect(snapshot["seats"]?.arrayValue?[2]["state"] == "locked")
        #expect(snapshot["seats"]?.arrayValue?[3]["muted"] == true)
        #expect(snapshot["chat"]?["lastMsgId"] == 5)
        // Attributes were kept, but not those that go with their owner.
        #expect(snapshot["attributes"] == ["topic": ["value": "قرآن", "owner": "owner"], "mood": ["value": "calm", "owner": "owner"]])
        let history = try await owner.call("chat.history", room: "keep", ["limit": 10])
        #expect(history["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } == ["m5", "m4", "m3", "m2", "m1"])
        // The same clientMsgId after the restart still stores nothing new.
        #expect(try await owner.call("chat.send", room: "keep", ["text": "m5", "clientMsgId": "c5"])["msgId"] == 5)
        let troll = try await TestClient.signedIn(server, user: "troll")
        do {
            try await troll.call("room.join", room: "keep")
            Issue.record("the ban did not survive")
        } catch {
            #expect((error as? ProtocolError)?.code == .banned)
        }
    }

    /// PostgreSQL away: what must be stored (chat, attributes, who sits where) is refused
    /// (`internal`) and changes nothing; back, the server reconnects by itself and stores again.
    @Test func aPostgresOutageRefusesStoredChangesCleanly() async throws {
        let postgres = try await offPool { try PostgresServer() }
        defer { postgres.stop() }
        let url = try await offPool { try postgres.makeDatabase() }
        let server = try TestServer { $0.postgresURL = url }
        defer { server.stop() }
        let owner = try await TestClient.signedIn(server, user: "owner")
        try await owner.call("room.create", room: "r")
        try await owner.call("chat.send", room: "r", ["text": "before", "clientMsgId": "c1"])

        try await offPool { try postgres.halt() }
        let refused = try await owner.request("chat.send", ["room": "r", "text": "during", "clientMsgId": "c2"])
        #expect(refused["error"]?["code"] == "internal", "\(refused)")
        let attribute = try await owner.request("attr.set", ["room": "r", "attrs": ["k": "v"]])
        #expect(attribute["error"]?["code"] == "internal", "\(attribute)")
        let seat = try await owner.request("seat.take", ["room": "r", "index": 1])
        #expect(seat["error"]?["code"] == "internal", "\(seat)")
        let during = try await owner.call("room.sync", room: "r")
        #expect(during["attributes"] == [:] && during["me"]?["seat"] == nil, "\(during)")

        try await offPool { try postgres.start() }
        try await owner.call("chat.send", room: "r", ["text": "after", "clientMsgId": "c3"])
        let history = try await owner.call("chat.history", room: "r", ["limit": 10])
        #expect(history["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } == ["after", "before"])
    }

    /// A seat acknowledged is a seat stored: refused while PostgreSQL is away; taken once it is
    /// back, it survives a `kill -9` of the server (the member is on it when it joins again).
    @Test func anAcknowledgedSeatSurvivesKillDashNineAfterAPostgresOutage() async throws {
        let postgres = try await offPool { try PostgresServer() }
        defer { postgres.stop() }
        let url = try await offPool { try postgres.makeDatabase() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-seat-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let secret = TestServer.newSecret()
        let arguments = [
            "serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", directory, "--keys", "\(TestServer.key):\(secret)",
            "--postgres", url,
        ]
        var process = try await MajlisProcess.start(arguments: arguments)
        let owner = try await TestClient.connect(process.url)
        _ = try await owner.request("hello", ["token": .string(TestServer.token("owner", secret: secret))])
        try await owner.call("room.create", room: "s")
        let guest = try await TestClient.connect(process.url)
        _ = try await guest.request("hello", ["token": .string(TestServer.token("guest", secret: secret))])
        try await guest.call("room.join", room: "s")
        try await offPool { try postgres.halt() }
        let refused = try await guest.request("seat.take", ["room": "s", "index": 2])
        #expect(refused["error"]?["code"] == "internal", "\(refused)")
        try await offPool { try postgres.start() }
        _ = try await guest.call("seat.take", room: "s", ["index": 2])
        _ = try await owner.call("seat.take", room: "s", ["index": 0])
        process.kill()

        process = try await MajlisProcess.start(arguments: arguments)
        defer { process.terminate() }
        let back = try await TestClient.connect(process.url)
        _ = try await back.request("hello", ["token": .string(TestServer.token("guest", secret: secret))])
        let snapshot = try await back.call("room.join", room: "s")
        #expect(snapshot["me"]?["seat"] == 2, "\(snapshot)")
        #expect(snapshot["seats"]?.arrayValue?.first?["user"] == "owner", "\(snapshot)")
    }

    @Test func acknowledgedChatSurvivesKillDashNine() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-kill-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let secret = TestServer.newSecret()
        var process = try await MajlisProcess.start(arguments: ["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", directory, "--keys", "\(TestServer.key):\(secret)"])
        let owner = try await TestClient.connect(process.url)
        _ = try await owner.request("hello", ["token": .string(TestServer.token("owner", secret: secret))])
        try await owner.call("room.create", room: "k")
        let url = process.url
        // Ten senders, ten messages each (within the per-user chat burst), all at once.
        let acknowledged = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for sender in 0..<10 {
                group.addTask {
                    let client = try await TestClient.connect(url)
                    _ = try await client.request("hello", ["token": .string(TestServer.token("sender\(sender)", secret: secret))])
                    try await client.call("room.join", room: "k")
                    var ids: [Int64] = []
                    for index in 0..<10 {
                        let posted = try await client.call("chat.send", room: "k", ["text": .string("n\(index)"), "clientMsgId": .string("k\(index)")])
                        ids.append(posted["msgId"]!.intValue!)
                    }
                    return ids
                }
            }
            var all: [Int64] = []
            for try await ids in group { all += ids }
            return all
        }
        #expect(acknowledged.count == 100)
        process.kill()
        process = try await MajlisProcess.start(arguments: ["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", directory, "--keys", "\(TestServer.key):\(secret)"])
        defer { process.terminate() }
        let again = try await TestClient.connect(process.url)
        _ = try await again.request("hello", ["token": .string(TestServer.token("owner", secret: secret))])
        try await again.call("room.join", room: "k")
        var stored: [Int64] = []
        var before: Int64? = nil
        while true {
            var args: [String: JSONValue] = ["limit": 100]
            if let before { args["before"] = .int(before) }
            let page = try await again.call("chat.history", room: "k", args)["messages"]?.arrayValue ?? []
            if page.isEmpty { break }
            stored += page.compactMap { $0["msgId"]?.intValue }
            before = page.last?["msgId"]?.intValue
        }
        #expect(Set(stored).isSuperset(of: acknowledged))
        #expect(stored.count == acknowledged.count)
    }
}
