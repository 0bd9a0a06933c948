import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MajlisPacks
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Gifts on the real server: the app's backend sends them through the server API, every member
/// sees them, a key counts once, and the room's leaderboard is read back, after a restart too.
@Suite struct GiftTests {
    /// A JSON call of the server API.
    static func api(_ server: TestServer, _ method: String, _ path: String, _ body: JSONValue? = nil, token: String) async throws -> (status: Int, body: JSONValue) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.server.port)\(path)")!)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = try JSONEncoder().encode(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, try JSONDecoder().decode(JSONValue.self, from: data))
    }

    @Test func theBackendsGiftsReachTheRoomCountOncePerKeyAndAreTallied() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-gifts-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try TestServer(dataDirectory: directory)
        let admin = ServerAPITests.adminToken(server)
        let emoji = try PackArchives.zip(PackArchives.files())
        let gifts = try PackArchives.zip(PackArchives.files(PackArchives.manifest.replacingOccurrences(of: #""kind": "emoji""#, with: #""kind": "gift""#)
            .replacingOccurrences(of: #""id": "classic""#, with: #""id": "gifts""#)))
        for pack in [emoji, gifts] { #expect(try await PackTests.call(server, "POST", "/v1/packs", body: pack, token: admin).status == 201) }
        let pack = JSONValue.string(ResourcePack.sha256(gifts))

        let huda = try await TestClient.signedIn(server, user: "huda")
        try await huda.call("room.create", room: "salon")
        let omar = try await TestClient.signedIn(server, user: "omar")
        try await omar.call("room.join", room: "salon")
        try await omar.call("seat.take", room: "salon", ["index": 1])

        // To the seat: whoever sits there receives it, and everyone sees it.
        let sent = try await Self.api(
            server, "POST", "/v1/rooms/salon/gifts", ["from": "sponsor", "index": 1, "pack": pack, "item": "heart", "count": 3, "key": "order-1"], token: admin)
        #expect(sent.status == 200 && sent.body["gift"]?["to"] == "omar" && sent.body["gift"]?["count"] == 3, "\(sent)")
        for client in [huda, omar] {
            let event = try await client.event("gift.sent")
            #expect(event["room"] == "salon" && event["data"]?["from"] == "sponsor" && event["data"]?["to"] == "omar", "\(event)")
            #expect(event["data"]?["index"] == 1 && event["data"]?["pack"] == pack && event["data"]?["item"] == "heart")
        }
        // The same key again counts once; a member of the room by id, from a member.
        #expect(try await Self.api(
            server, "POST", "/v1/rooms/salon/gifts", ["from": "sponsor", "index": 1, "pack": pack, "item": "heart", "count": 3, "key": "order-1"], token: admin).status == 200)
        let named = try await Self.api(server, "POST", "/v1/rooms/salon/gifts", ["from": "omar", "to": "huda", "pack": pack, "item": "laugh", "count": 2, "key": "order-2"], token: admin)
        #expect(named.body["gift"]?["fromName"] == "Omar" && named.body["gift"]?["index"] == nil, "\(named)")

        // What is refused, and why.
        for (body, status, words) in [
            (["from": "a", "index": 1, "pack": pack, "item": "dance", "key": "k"], 404, "no gift dance"),
            (["from": "a", "index": 1, "pack": .string(ResourcePack.sha256(emoji)), "item": "heart", "key": "k"], 404, "no gift heart"),
            (["from": "a", "index": 0, "pack": pack, "item": "heart", "key": "k"], 404, "no one sits on seat 0"),
            (["from": "a", "index": 20, "pack": pack, "item": "heart", "key": "k"], 404, "no seat 20"),
            (["from": "a", "to": "zaid", "pack": pack, "item": "heart", "key": "k"], 404, "zaid is not in room salon"),
            (["from": "a", "to": "omar", "index": 1, "pack": pack, "item": "heart", "key": "k"], 400, "not both"),
            (["from": "a", "to": "omar", "pack": pack, "item": "heart"], 400, "Idempotency-Key"),
            (["from": "a", "to": "omar", "pack": pack, "item": "heart", "count": 0, "key": "k"], 400, "count"),
        ] as [(JSONValue, Int, String)] {
            let refused = try await Self.api(server, "POST", "/v1/rooms/salon/gifts", body, token: admin)
            #expect(refused.status == status && refused.body["error"]?["message"]?.stringValue?.contains(words) == true, "\(body): \(refused)")
        }
        // Members do not send gifts: the backend owns what they cost.
        let member = try await omar.request("gift.send", ["room": "salon", "from": "omar", "to": "huda", "pack": pack, "item": "heart", "key": "m1"])
        #expect(member["error"]?["code"] == "forbidden", "\(member)")

        let expected: JSONValue = [
            "givers": [["user": "sponsor", "count": 3], ["user": "omar", "count": 2]],
            "receivers": [["user": "omar", "count": 3], ["user": "huda", "count": 2]],
        ]
        let today = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withFullDate])
        #expect(try await Self.api(server, "GET", "/v1/rooms/salon/gifts/leaders", token: admin).body == expected)
        #expect(try await Self.api(server, "GET", "/v1/rooms/salon/gifts/leaders?day=\(today)", token: admin).body == expected)
        #expect(try await Self.api(server, "GET", "/v1/rooms/salon/gifts/leaders?day=2020-01-01", token: admin).body == ["givers": [], "receivers": []])
        #expect(try await Self.api(server, "GET", "/v1/rooms/salon/gifts/leaders?limit=1", token: admin).body
            == ["givers": [["user": "sponsor", "count": 3]], "receivers": [["user": "omar", "count": 3]]])
        #expect(try await Self.api(server, "GET", "/v1/rooms/salon/gifts/leaders?day=2020-02-30", token: admin).status == 400)
        #expect(try await Self.api(server, "GET", "/v1/rooms/nowhere/gifts/leaders", token: admin).status == 404)
        // Members read it too; others do not.
        #expect(try await huda.call("gift.leaders", room: "salon", ["day": .string(today)]) == expected)
        let stranger = try await TestClient.signedIn(server, user: "zaid")
        #expect(try await stranger.request("gift.leaders", ["room": "salon"])["error"]?["code"] == "not_in_room")
        stranger.disconnect()

        // What was answered was kept.
        huda.disconnect()
        omar.disconnect()
        server.stop()
        server = try TestServer(dataDirectory: directory, secret: server.secret)
        defer { server.destroy() }
        #expect(try await Self.api(server, "GET", "/v1/rooms/salon/gifts/leaders", token: ServerAPITests.adminToken(server)).body == expected)
    }
}
