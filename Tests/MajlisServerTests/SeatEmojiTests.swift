import Foundation
import MajlisPacks
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Seat emoji on the real server: from packs the operator uploaded, to every member at once,
/// refused for items the server does not keep, off when the owner says, and held to the chat
/// rate without slowing anyone else.
@Suite struct SeatEmojiTests {
    @Test func anEmojiOfAKeptPackReachesEveryMemberOnItsSeat() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let admin = ServerAPITests.adminToken(server)
        let emoji = try PackArchives.zip(PackArchives.files())
        let gifts = try PackArchives.zip(PackArchives.files(PackArchives.manifest.replacingOccurrences(of: #""kind": "emoji""#, with: #""kind": "gift""#)
            .replacingOccurrences(of: #""id": "classic""#, with: #""id": "gifts""#)))
        for pack in [emoji, gifts] { #expect(try await PackTests.call(server, "POST", "/v1/packs", body: pack, token: admin).status == 201) }
        let pack = ResourcePack.sha256(emoji)

        let owner = try await TestClient.signedIn(server, user: "huda")
        try await owner.call("room.create", room: "salon")
        let omar = try await TestClient.signedIn(server, user: "omar")
        try await omar.call("room.join", room: "salon")
        let zaid = try await TestClient.signedIn(server, user: "zaid")
        try await zaid.call("room.join", room: "salon")
        try await omar.call("seat.emoji", room: "salon", ["index": 2, "pack": .string(pack), "item": "laugh"])
        for client in [owner, omar, zaid] {
            let event = try await client.event("seat.emoji")
            #expect(event["data"] == ["index": 2, "user": "omar", "pack": .string(pack), "item": "laugh"], "\(event)")
            #expect(event["room"] == "salon" && event["seq"] == nil)
        }

        // Only items of emoji packs the server keeps.
        for (args, words) in [
            (["index": 0, "pack": .string(pack), "item": "dance"], "no emoji dance"),
            (["index": 0, "pack": .string(ResourcePack.sha256(gifts)), "item": "laugh"], "no emoji laugh"),
            (["index": 0, "pack": "not-a-name", "item": "laugh"], "args.pack"),
            (["index": 9, "pack": .string(pack), "item": "laugh"], "the room has no seat 9"),
        ] as [([String: JSONValue], String)] {
            var withRoom = args
            withRoom["room"] = "salon"
            let refused = try await omar.request("seat.emoji", withRoom)
            #expect(refused["error"]?["code"] == "bad_request" && refused["error"]?["message"]?.stringValue?.contains(words) == true, "\(refused)")
        }

        // Off: members are refused, the owner is not.
        try await owner.call("room.emoji", room: "salon", ["on": false])
        #expect(try await zaid.event("room.updated")["data"]?["room"]?["emojiOff"] == true)
        let off = try await omar.request("seat.emoji", ["room": "salon", "index": 0, "pack": .string(pack), "item": "laugh"])
        #expect(off["error"]?["code"] == "forbidden", "\(off)")
        try await owner.call("seat.emoji", room: "salon", ["index": 0, "pack": .string(pack), "item": "heart"])
        // The app's backend turns them on again.
        #expect(try await ServerAPITests.call(server, "POST", "/v1/rooms/salon/emoji", #"{"on":true}"#).status == 200)
        #expect(try await zaid.event("room.updated")["data"]?["room"]?["emojiOff"] == nil)

        // A hundred at once: the chat rate (what is left of its burst after the sends above)
        // lets a few through and refuses the rest, and another member's chat goes on.
        let ids = (0..<100).map { _ in omar.send("seat.emoji", ["room": "salon", "index": 1, "pack": .string(pack), "item": "clap"]) }
        var passed = 0
        var limited = 0
        for id in ids {
            let answer = try await omar.response(to: id)
            if answer["ok"] == true { passed += 1 } else if answer["error"]?["code"] == "rate_limited" { limited += 1 }
        }
        #expect(passed + limited == 100 && limited > 50 && passed > 0, "passed \(passed), limited \(limited)")
        try await zaid.call("chat.send", room: "salon", ["text": "hi", "clientMsgId": "z1"])
    }
}
