import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

extension ClusterTests {
    /// Failures of a cluster's parts at random moments, twenty times each: what was acknowledged
    /// is kept and what was refused is not, and clients that met a node at any moment of its life
    /// follow their room when it dies. Nested in `ClusterTests`, so run one at a time with its
    /// tests: a node paused or killed is judged by how soon another takes its rooms.
    @Suite struct Failures {
        /// Twenty times, a room's node is paused past its lease (SIGSTOP, then woken once another
        /// node has taken the room) or killed (kill -9) at a random moment while its member sends
        /// chat: every message acknowledged is in the room where it is now, and none refused is (a
        /// failure inside a store write included).
        @Test(arguments: [SIGSTOP, SIGKILL]) func acknowledgedChatSurvivesFailuresAtRandomMoments(_ failure: Int32) async throws {
            let shared = try await ClusterTests.sharedStore()
            let survivor = try ClusterTests.node("node-b", redis: shared.redis, postgres: shared.postgres, secret: shared.secret)
            defer { survivor.destroy() }
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-node-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: data) }
            var generator = SystemRandomNumberGenerator()
            var acknowledged = 0, refusals = 0
            // A paused node wakes and goes on; a killed one is replaced by a new node (its own id).
            var node = try await ClusterTests.process("node-a", shared, data: data + "/0")
            defer { node.terminate() }
            for round in 0..<20 {
                if failure == SIGKILL && round > 0 { node = try await ClusterTests.process("node-a\(round)", shared, data: data + "/\(round)") }
                // A node just woken from a pause may still be handing over the rooms it lost: a room
                // made on it then can move at once (1001, "moved to another node"). The round then
                // makes another, as a client would follow its room; what is tested starts after.
                var opened: (room: String, client: TestClient)?
                for attempt in 1...3 where opened == nil {
                    let room = attempt == 1 ? "round\(round)" : "round\(round)-\(attempt)"
                    let client = try await TestClient.connect(node.url)
                    // A user of its own each round: the rooms of 20 rounds and their retries would
                    // pass the 20 one user may own.
                    _ = try await client.request("hello", ["token": .string(survivor.token("huda\(round)"))])
                    do {
                        _ = try await client.call("room.join", room: room, ["create": ["title": "Round"]])
                    } catch where attempt < 3 && "\(error)".contains("moved to another node") {
                        continue
                    }
                    // Asked of the room itself: node-b's count of rooms also falls as its sweeper
                    // lets earlier rounds' idle rooms go.
                    try #require(!survivor.server.hasLoaded(room), "round \(round): the room opened on node-b")
                    opened = (room, client)
                }
                let (room, huda) = try #require(opened)
                // Chat every 20 ms (within the room's burst), answered or refused, until stopped.
                let sender = Task { () -> (ok: [String], refused: [String]) in
                    var ok: [String] = [], refused: [String] = []
                    for index in 0..<40 {
                        let text = "\(room)-\(index)"
                        guard let answer = try? await huda.request("chat.send", ["room": .string(room), "type": "text", "text": .string(text), "clientMsgId": .string(text)])
                        else { break }
                        if answer["ok"] == true { ok.append(text) } else { refused.append(text) }
                        if Task.isCancelled { break }
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                    return (ok, refused)
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...300, using: &generator)))
                if failure == SIGKILL { node.kill() } else { kill(node.process.processIdentifier, SIGSTOP) }
                let omar = try await TestClient.signedIn(survivor, user: "omar\(round)")
                var refusal = ""
                let moved = await eventually(within: 40) {
                    do {
                        _ = try await omar.call("room.join", room: room)
                        return true
                    } catch {
                        refusal = "\(error)"
                        return false
                    }
                }
                if failure == SIGSTOP { kill(node.process.processIdentifier, SIGCONT) }
                try #require(moved, "round \(round): node-b never took the room; the last answer: \(refusal)")
                sender.cancel()
                let (ok, refused) = await sender.value
                let history = try await omar.call("chat.history", room: room, ["limit": 100])
                let kept = Set(history["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? [])
                #expect(Set(ok).subtracting(kept).isEmpty, "round \(round): acknowledged but lost: \(Set(ok).subtracting(kept).sorted())")
                #expect(Set(refused).intersection(kept).isEmpty, "round \(round): refused but kept: \(Set(refused).intersection(kept).sorted())")
                acknowledged += ok.count
                refusals += refused.count
                omar.disconnect()
                huda.disconnect()
            }
            print("20 \(failure == SIGKILL ? "kill -9" : "pauses") at random moments: \(acknowledged) messages acknowledged, all kept; \(refusals) refused, none kept")
            #expect(acknowledged > 20)
        }

        /// Twenty PostgreSQL outages, each beginning at a random moment while a member of a room on
        /// node-a sends chat and takes and leaves a seat in turn, and lasting a random time. Each
        /// time the room then holds every message acknowledged and none refused, and the member is
        /// on the seat exactly when its last acknowledged seat change put it there. At the end node-a
        /// is killed (kill -9) and node-b takes the twenty rooms from the store: the same there.
        @Test func acknowledgedChangesSurvivePostgresOutagesAtRandomMoments() async throws {
            let postgres = try await offPool { try PostgresServer() }  // its own: it is stopped
            defer { postgres.stop() }
            let shared = (redis: try await ClusterTests.redis().url(database: ClusterTests.database()), postgres: try await offPool { try postgres.makeDatabase() }, secret: TestServer.newSecret())
            let survivor = try ClusterTests.node("node-b", redis: shared.redis, postgres: shared.postgres, secret: shared.secret)
            defer { survivor.destroy() }
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-node-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: data) }
            let node = try await ClusterTests.process("node-a", shared, data: data)
            defer { node.terminate() }
            var generator = SystemRandomNumberGenerator()
            var expected: [(room: String, user: String, chat: Set<String>, refused: Set<String>, seated: Bool)] = []
            var members: [TestClient] = []  // kept connected: their seats are held for them
            let started = Date()
            var totals = (chat: 0, chatRefused: 0, seat: 0, seatRefused: 0)
            for round in 0..<20 {
                let room = "outage\(round)", user = "huda\(round)"
                let huda = try await TestClient.connect(node.url)
                _ = try await huda.request("hello", ["token": .string(survivor.token(user))])
                members.append(huda)
                // Placed on either node (huda's ops relayed to node-b then): both keep what they acknowledge.
                _ = try await huda.call("room.join", room: room, ["create": ["title": "Outage"]])
                let sender = Task { () -> (ok: [String], refused: [String], seated: Bool, seatChanges: Int, seatRefusals: Int) in
                    var ok: [String] = [], refused: [String] = []
                    var seated = false, seatChanges = 0, seatRefusals = 0
                    for index in 0..<10 {  // within the chat burst
                        let text = "\(room)-\(index)"
                        guard let chat = try? await huda.request("chat.send", ["room": .string(room), "type": "text", "text": .string(text), "clientMsgId": .string(text)])
                        else { break }
                        if chat["ok"] == true { ok.append(text) } else { refused.append(text) }
                        let op = seated ? "seat.leave" : "seat.take"
                        let args: [String: JSONValue] = seated ? ["room": .string(room)] : ["room": .string(room), "index": 1]
                        guard let seat = try? await huda.request(op, args) else { break }
                        if seat["ok"] == true {
                            seated.toggle()
                            seatChanges += 1
                        } else {
                            seatRefusals += 1
                        }
                        try? await Task.sleep(for: .milliseconds(50))
                    }
                    return (ok, refused, seated, seatChanges, seatRefusals)
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...400, using: &generator)))
                try await offPool { try postgres.halt() }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...600, using: &generator)))
                try await offPool { try postgres.start() }
                let outcome = await sender.value
                let history = try await huda.call("chat.history", room: room, ["limit": 100])
                let kept = Set(history["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? [])
                #expect(Set(outcome.ok).subtracting(kept).isEmpty, "round \(round): acknowledged but lost: \(Set(outcome.ok).subtracting(kept).sorted())")
                #expect(Set(outcome.refused).intersection(kept).isEmpty, "round \(round): refused but kept: \(Set(outcome.refused).intersection(kept).sorted())")
                let synced = try await huda.call("room.sync", room: room)
                #expect((synced["me"]?["seat"] == 1) == outcome.seated, "round \(round): \(synced["me"] ?? .null)")
                expected.append((room, user, Set(outcome.ok), Set(outcome.refused), outcome.seated))
                totals.chat += outcome.ok.count
                totals.chatRefused += outcome.refused.count
                totals.seat += outcome.seatChanges
                totals.seatRefused += outcome.seatRefusals
            }
            #expect(totals.chatRefused > 0 && totals.seatRefused > 0, "no outage met an op: \(totals)")

            let onNodeB = survivor.server.loadedRooms
            let killed = Date()
            node.kill()
            members.removeAll()
            let omar = try await TestClient.signedIn(survivor, user: "omar")
            for (room, user, chat, refused, seated) in expected {
                // Asked every quarter second, as clients do (within the connection's request rate).
                var snapshot: JSONValue?, refusal: Error?
                let deadline = Date().addingTimeInterval(40)
                while snapshot == nil, Date() < deadline {
                    do { snapshot = try await omar.call("room.join", room: room) } catch {
                        refusal = error
                        try await Task.sleep(for: .milliseconds(250))
                    }
                }
                try #require(snapshot != nil, "node-b never took \(room): \(refusal.map { "\($0)" } ?? "")")
                let onSeat = snapshot?["seats"]?.arrayValue?.dropFirst().first?["user"] == .string(user)
                #expect(onSeat == seated, "\(room) after kill -9: \(snapshot?["seats"] ?? .null)")
                let history = try await omar.call("chat.history", room: room, ["limit": 100])
                let kept = Set(history["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? [])
                #expect(chat.subtracting(kept).isEmpty && refused.intersection(kept).isEmpty, "\(room) after kill -9: \(kept.sorted())")
                _ = try await omar.call("room.leave", room: room)  // one user is in ten rooms at most
            }
            print(
                "20 PostgreSQL outages at random moments: \(totals.chat) messages and \(totals.seat) seat changes acknowledged, all kept "
                    + "(after kill -9 too); \(totals.chatRefused) messages and \(totals.seatRefused) seat changes refused, none kept; \(20 - onNodeB) of the rooms were on node-a; "
                    + String(format: "the rounds took %.1f s, the rooms' move %.1f s", killed.timeIntervalSince(started), Date().timeIntervalSince(killed)))
            #expect(onNodeB < 20, "every room opened on node-b: the kill tested nothing")
        }

        /// Twenty times a node starts (the last one's replacement after kill -9) and, at a random
        /// moment of its first second, a client says `hello` to it and a speaker bot joins a room
        /// there: the client is told both live nodes, and when the node is killed the bot follows
        /// its room to the other node by itself and is heard there.
        @Test func clientsMetInANodesFirstSecondFollowTheirRoomWhenItDies() async throws {
            let shared = try await ClusterTests.sharedStore()
            let survivor = try ClusterTests.node("node-b", redis: shared.redis, postgres: shared.postgres, secret: shared.secret)
            defer { survivor.destroy() }
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-node-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: data) }
            var generator = SystemRandomNumberGenerator()
            var followed: [Double] = []
            for round in 0..<20 {
                let room = "first\(round)"
                let node = try await ClusterTests.process("node-a", shared, data: data + "/\(round)")
                defer { node.terminate() }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...1000, using: &generator)))
                let host = try await TestClient.connect(node.url)
                let hello = try await host.request("hello", ["token": .string(survivor.token("host"))])
                let listed = Set(hello["data"]?["nodes"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
                #expect(listed == ["node-a", "node-b"], "round \(round): \(hello)")
                let created = try await host.call("room.join", room: room, ["create": ["title": "First"]])
                try #require(created["media"]?["udp"]?.stringValue != survivor.server.mediaAddress, "round \(round): the room opened on node-b")
                let bot = try JoinBotTests.Bot([
                    "--url", node.url, "--token", survivor.token("speaker"), "--room", room, "--seat", "2", "--mic", "tone:440", "--duration", "60",
                ])
                defer { bot.interrupt() }
                try await host.event("speaker.levels", timeout: 30) { event in
                    event["data"]?["levels"]?.arrayValue?.contains { $0["user"] == "speaker" && ($0["level"]?.intValue ?? 0) > 0 } == true
                }
                let killed = Date()
                node.kill()
                // node-b opens the room once node-a's lease lapses; the bot can only be heard there
                // if it reconnected to node-b (its room's node is gone) and joined again.
                let omar = try await TestClient.signedIn(survivor, user: "omar\(round)")
                #expect(await eventually(within: 30) { (try? await omar.call("room.join", room: room)) != nil }, "round \(round): node-b never took the room")
                try await omar.event("speaker.levels", timeout: 30) { event in
                    event["data"]?["levels"]?.arrayValue?.contains { $0["user"] == "speaker" && ($0["level"]?.intValue ?? 0) > 0 } == true
                }
                followed.append(Date().timeIntervalSince(killed))
                omar.disconnect()
                bot.interrupt()
                #expect(await bot.finish().status == 0, "round \(round)")
            }
            followed.sort()
            print(String(format: "20 nodes killed after clients met them in their first second: the bot heard on node-b %.2f s after (median), %.2f s (max)", followed[10], followed[19]))
        }
    }
}
