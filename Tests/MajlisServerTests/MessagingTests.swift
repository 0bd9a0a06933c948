import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Conversations outside rooms, through a real server and real connections (docs/protocol.md
/// section 17): every device of every member hears a message at once, an offline device catches
/// up by sequence number, a retried send posts once, and groups keep their roles.
@Suite(.serialized) struct MessagingTests {
    func code(_ answer: JSONValue) -> String? { answer["error"]?["code"]?.stringValue }

    @Test func aDirectMessageReachesEveryDeviceOfBothUsersButTheSendingOne() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let phone = try await TestClient.signedIn(server, user: "huda", device: "phone")
        let web = try await TestClient.signedIn(server, user: "huda", device: "web")
        let omarPhone = try await TestClient.signedIn(server, user: "omar", device: "phone")
        let omarTablet = try await TestClient.signedIn(server, user: "omar", device: "tablet")
        // Two devices of one user live side by side: neither replaced the other.
        #expect(!phone.isClosed && !omarPhone.isClosed)

        let sent = try await phone.request("msg.send", ["to": "omar", "text": "مرحبا", "clientMsgId": "c1"])
        #expect(sent["ok"] == true, "\(sent)")
        let conversation = try #require(sent["data"]?["conversation"]?.stringValue)
        #expect(sent["data"]?["seq"] == 1)
        for device in [omarPhone, omarTablet, web] {
            let event = try await device.event("msg.new")
            #expect(event["data"]?["conversation"]?.stringValue == conversation)
            #expect(event["data"]?["text"] == "مرحبا" && event["data"]?["from"]?["id"] == "huda" && event["data"]?["seq"] == 1)
            #expect(event["room"] == nil && event["seq"] == nil)
        }
        // The answer came to the sender's device, the event did not.
        let answer = try await omarTablet.request("msg.send", ["to": "huda", "text": "أهلا", "clientMsgId": "c1"])
        #expect(answer["data"]?["conversation"]?.stringValue == conversation && answer["data"]?["seq"] == 2)
        _ = try await phone.event("msg.new") { $0["data"]?["seq"] == 2 }
        #expect(!phone.pendingEvents.contains { $0["data"]?["seq"] == 1 })

        // Both see it in their lists, with the other as peer; the reply marked Omar's read.
        let list = try await phone.request("conv.list")
        let entry = try #require(list["data"]?["conversations"]?.arrayValue?.first)
        #expect(entry["id"]?.stringValue == conversation && entry["kind"] == "direct" && entry["peer"] == "omar")
        #expect(entry["lastSeq"] == 2 && entry["readSeq"] == 1 && entry["unread"] == 1 && list["data"]?["unread"] == 1)
        #expect(entry["lastMessage"]?["text"] == "أهلا")
        let omars = try await omarPhone.request("conv.list")
        let omarsEntry = omars["data"]?["conversations"]?.arrayValue?.first
        #expect(omarsEntry?["peer"] == "huda" && omarsEntry?["unread"] == 0)
    }

    @Test func aRetriedSendPostsOnceAndAnOfflineDeviceCatchesUpInPages() async throws {
        // Faster than the chat rate allows a person: a bot's burst.
        let server = try TestServer { config in
            config.roomLimits.chatBurst = 100
            config.strangerMessages = 100
        }
        defer { server.destroy() }
        let huda = try await TestClient.signedIn(server, user: "huda")
        var conversation = ""
        for index in 1...25 {
            let answer = try await huda.request("msg.send", ["to": "omar", "text": .string("m\(index)"), "clientMsgId": .string("c\(index)")])
            conversation = try #require(answer["data"]?["conversation"]?.stringValue)
        }
        let again = try await huda.request("msg.send", ["to": "omar", "text": "m25 again", "clientMsgId": "c25"])
        #expect(again["data"]?["seq"] == 25 && again["data"]?["duplicate"] == true)

        // Omar was offline for all of it: his device syncs from what it had (seq 0), 10 a page.
        let omar = try await TestClient.signedIn(server, user: "omar")
        var seen: [Int64] = []
        var texts: [String] = []
        var more = true
        while more {
            let page = try await omar.request("msg.sync", ["conversation": .string(conversation), "after": .int(seen.last ?? 0), "limit": 10])
            let messages = page["data"]?["messages"]?.arrayValue ?? []
            seen += messages.compactMap { $0["seq"]?.intValue }
            texts += messages.compactMap { $0["text"]?.stringValue }
            more = page["data"]?["more"] == true
        }
        #expect(seen == Array(1...25))
        #expect(texts.last == "m25")
        let list = try await omar.request("conv.list")
        #expect(list["data"]?["unread"] == 25)
        let read = try await omar.request("msg.read", ["conversation": .string(conversation), "seq": 25])
        #expect(read["data"]?["readSeq"] == 25)
        // The sender is told who read, up to where.
        let receipt = try await huda.event("msg.read")
        #expect(receipt["data"]?["user"] == "omar" && receipt["data"]?["seq"] == 25)
        #expect(try await omar.request("conv.list")["data"]?["unread"] == 0)
    }

    @Test func aGroupKeepsItsRolesAndTellsItsMembers() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let owner = try await TestClient.signedIn(server, user: "owner")
        let amal = try await TestClient.signedIn(server, user: "amal")
        let badr = try await TestClient.signedIn(server, user: "badr")
        let stranger = try await TestClient.signedIn(server, user: "stranger")

        let made = try await owner.request("conv.create", ["title": "رحلة", "members": ["amal"]])
        let group = try #require(made["data"]?["conversation"]?["id"]?.stringValue)
        #expect(made["data"]?["conversation"]?["role"] == "owner" && made["data"]?["conversation"]?["memberCount"] == 2)
        let told = try await amal.event("conv.updated")
        #expect(told["data"]?["conversation"]?.stringValue == group && told["data"]?["title"] == "رحلة")

        // A member may not invite; the owner may; the invited learn of the group.
        #expect(code(try await amal.request("conv.invite", ["conversation": .string(group), "users": ["badr"]])) == "forbidden")
        let invited = try await owner.request("conv.invite", ["conversation": .string(group), "users": ["badr", "amal"]])
        #expect(invited["data"]?["added"] == ["badr"])
        _ = try await badr.event("conv.updated") { $0["data"]?["joined"] == ["badr"] }

        // Someone outside the group neither reads nor writes it.
        #expect(code(try await stranger.request("msg.sync", ["conversation": .string(group)])) == "conversation_not_found")
        #expect(code(try await stranger.request("msg.send", ["conversation": .string(group), "text": "hi", "clientMsgId": "x"])) == "conversation_not_found")

        // A card with a type no client knows keeps its fallback and payload.
        let card = try await amal.request(
            "msg.send", ["conversation": .string(group), "type": "paper_boat", "payload": ["bottle": 7], "fallback": "A paper boat drifted in", "clientMsgId": "b1"])
        #expect(card["ok"] == true)
        for member in [owner, badr] {
            let event = try await member.event("msg.new")
            #expect(event["data"]?["type"] == "paper_boat" && event["data"]?["fallback"] == "A paper boat drifted in" && event["data"]?["payload"]?["bottle"] == 7)
        }
        #expect(code(try await amal.request("msg.send", ["conversation": .string(group), "type": "paper_boat", "clientMsgId": "b2"])) == "bad_request")

        // Typing reaches the others, not the typist's own connection.
        _ = try await badr.request("msg.typing", ["conversation": .string(group)])
        let typing = try await amal.event("msg.typing")
        #expect(typing["data"]?["user"] == "badr" && (typing["data"]?["until"]?.intValue ?? 0) > 0)

        // An admin removes members but not the owner; the removed one is told, the rest see it.
        #expect(try await owner.request("conv.role", ["conversation": .string(group), "user": "amal", "role": "admin"])["ok"] == true)
        #expect(code(try await amal.request("conv.remove", ["conversation": .string(group), "user": "owner"])) == "forbidden")
        #expect(try await amal.request("conv.remove", ["conversation": .string(group), "user": "badr"])["ok"] == true)
        let removed = try await badr.event("conv.removed")
        #expect(removed["data"]?["reason"] == "removed" && removed["data"]?["by"] == "amal")
        #expect(code(try await badr.request("msg.sync", ["conversation": .string(group)])) == "conversation_not_found")

        // The owner leaves: the admin owns the group now.
        #expect(try await owner.request("conv.leave", ["conversation": .string(group)])["ok"] == true)
        let handed = try await amal.event("conv.updated") { $0["data"]?["left"] == ["owner"] }
        #expect(handed["data"]?["owner"] == "amal")
        let details = try await amal.request("conv.get", ["conversation": .string(group)])
        #expect(details["data"]?["conversation"]?["role"] == "owner" && details["data"]?["members"]?.arrayValue?.count == 1)
    }

    @Test func badMessagingRequestsAreRefusedClearly() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let huda = try await TestClient.signedIn(server, user: "huda")
        let cases: [(String, [String: JSONValue], String)] = [
            ("msg.send", ["text": "hi", "clientMsgId": "c"], "bad_request"),
            ("msg.send", ["to": "omar", "conversation": "x", "text": "hi", "clientMsgId": "c"], "bad_request"),
            ("msg.send", ["to": "huda", "text": "hi", "clientMsgId": "c"], "bad_request"),
            ("msg.send", ["to": "omar", "text": "", "clientMsgId": "c"], "bad_request"),
            ("msg.send", ["to": "omar", "text": .string(String(repeating: "x", count: 4_001)), "clientMsgId": "c"], "bad_request"),
            ("msg.send", ["to": "bad id!", "text": "hi", "clientMsgId": "c"], "bad_request"),
            ("conv.create", ["title": " "], "bad_request"),
            ("conv.create", ["title": "\u{1C}\u{3000}\t"], "bad_request"),
            ("conv.role", ["conversation": "g", "user": "omar", "role": "owner"], "bad_request"),
            ("conv.settings", ["conversation": "g"], "bad_request"),
            ("conv.get", ["conversation": "g-none"], "conversation_not_found"),
            ("msg.search", ["q": "?!"], "bad_request"),
            ("msg.search", ["q": "hi", "limit": 51], "bad_request"),
            ("msg.search", ["q": "hi", "conversation": "g-none"], "conversation_not_found"),
        ]
        for (op, args, expected) in cases {
            let answer = try await huda.request(op, args)
            #expect(code(answer) == expected, "\(op) \(args): \(answer)")
        }
        // A direct conversation is not a group.
        let sent = try await huda.request("msg.send", ["to": "omar", "text": "hi", "clientMsgId": "c"])
        let direct = try #require(sent["data"]?["conversation"]?.stringValue)
        #expect(code(try await huda.request("conv.invite", ["conversation": .string(direct), "users": ["badr"]])) == "bad_request")
        #expect(code(try await huda.request("conv.leave", ["conversation": .string(direct)])) == "bad_request")
        // A reply to a message that does not exist.
        #expect(code(try await huda.request("msg.send", ["conversation": .string(direct), "text": "re", "replyTo": 9, "clientMsgId": "d"])) == "bad_request")
        // A token for one room does not message.
        let roomOnly = try await TestClient.connect(server.url)
        _ = try await roomOnly.request("hello", ["token": .string(server.token("zaid", room: "salon"))])
        #expect(code(try await roomOnly.request("conv.list")) == "forbidden")
    }

    /// A member finds messages of its conversations by words, page by page, newest first.
    @Test func aMemberSearchesItsConversationsPageByPage() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let huda = try await TestClient.signedIn(server, user: "huda")
        let omar = try await TestClient.signedIn(server, user: "omar")
        _ = try await huda.request("msg.send", ["to": "omar", "text": "متى؟", "clientMsgId": "q"])
        for index in 1...5 {
            _ = try await omar.request("msg.send", ["to": "huda", "text": .string("موعد الاجتماع \(index)"), "clientMsgId": .string("m\(index)")])
        }
        _ = try await omar.request("msg.send", ["to": "sara", "text": "موعد آخر", "clientMsgId": "s"])
        // Pages of two, none missed or twice (messages may share a millisecond).
        var found: [String] = []
        var cursor: JSONValue?
        var pages = 0
        repeat {
            var args: [String: JSONValue] = ["q": "اجتماع موعد", "limit": 2]
            if let cursor { args["cursor"] = cursor }
            let page = try await huda.request("msg.search", args)
            found += page["data"]?["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? []
            cursor = page["data"]?["next"]
            #expect((page["data"]?["more"] == true) == (cursor != nil))
            pages += 1
        } while cursor != nil && pages < 10
        #expect(found == (1...5).reversed().map { "موعد الاجتماع \($0)" }, "\(found)")
        #expect(code(try await huda.request("msg.search", ["q": "موعد", "cursor": "nonsense"])) == "bad_request")
        let all = try await huda.request("msg.search", ["q": "موعد", "limit": 50])
        #expect(all["data"]?["messages"]?.arrayValue?.count == 5 && all["data"]?["more"] == false, "\(all)")
    }

    /// A public group is found by its words and joined at once (`open`) or on request, which
    /// its admins accept or decline; a private one is neither listed nor joined.
    @Test func publicGroupsAreFoundAndJoinedFreelyOrOnRequest() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let huda = try await TestClient.signedIn(server, user: "huda")
        let omar = try await TestClient.signedIn(server, user: "omar")
        let sara = try await TestClient.signedIn(server, user: "sara")
        func make(_ title: String, _ access: String, about: String? = nil) async throws -> String {
            var args: [String: JSONValue] = ["title": .string(title), "access": .string(access)]
            if let about { args["about"] = .string(about) }
            let made = try await huda.request("conv.create", args)
            return try #require(made["data"]?["conversation"]?["id"]?.stringValue, "\(made)")
        }
        let hiking = try await make("Hiking in Hokkaido", "open", about: "北海道の山歩き")
        let books = try await make("نادي الكتاب", "request")
        let family = try await make("Family", "private")
        func found(_ query: String?) async throws -> [String] {
            var args: [String: JSONValue] = [:]
            if let query { args["q"] = .string(query) }
            let page = try await sara.request("conv.discover", args)
            return page["data"]?["groups"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        }
        #expect(Set(try await found(nil)) == [hiking, books])
        #expect(try await found("hokk") == [hiking])
        #expect(try await found("北海道") == [hiking])
        #expect(try await found("كتاب") == [books])
        #expect(try await found("family") == [])

        // Open: joined at once; everyone hears of it.
        let joined = try await sara.request("conv.join", ["conversation": .string(hiking)])
        #expect(joined["data"]?["conversation"]?["id"] == .string(hiking) && joined["data"]?["conversation"]?["access"] == "open", "\(joined)")
        #expect(try await huda.event("conv.updated") { $0["data"]?["joined"] == ["sara"] }["data"]?["memberCount"] == 2)
        // On request: the owner hears, accepts one and declines another.
        let asked = try await sara.request("conv.join", ["conversation": .string(books), "note": "أحب القراءة"])
        #expect(asked["data"]?["requested"] == true, "\(asked)")
        let request = try await huda.event("conv.request")
        #expect(request["data"]?["user"] == "sara" && request["data"]?["note"] == "أحب القراءة")
        _ = try await omar.request("conv.join", ["conversation": .string(books)])
        let pending = try await huda.request("conv.requests", ["conversation": .string(books)])
        #expect(pending["data"]?["requests"]?.arrayValue?.compactMap { $0["user"]?.stringValue } == ["sara", "omar"], "\(pending)")
        #expect(code(try await sara.request("conv.requests", ["conversation": .string(books)])) == "conversation_not_found")
        _ = try await huda.request("conv.answer", ["conversation": .string(books), "user": "sara", "accept": true])
        #expect(try await sara.event("conv.updated") { $0["data"]?["conversation"] == .string(books) }["data"]?["joined"] == ["sara"])
        _ = try await huda.request("conv.answer", ["conversation": .string(books), "user": "omar", "accept": false])
        #expect(try await omar.event("conv.declined")["data"]?["by"] == "huda")
        #expect(code(try await huda.request("conv.answer", ["conversation": .string(books), "user": "omar", "accept": true])) == "bad_request")
        #expect(code(try await omar.request("msg.sync", ["conversation": .string(books)])) == "conversation_not_found")
        // Private: not joined, not told apart from none.
        #expect(code(try await sara.request("conv.join", ["conversation": .string(family)])) == "conversation_not_found")
        // Made private, a group is no longer listed.
        _ = try await huda.request("conv.update", ["conversation": .string(hiking), "access": "private"])
        #expect(try await found(nil) == [books])
    }

    /// A group's admins keep a member from sending for a while, and feature messages for everyone.
    @Test func adminsMuteMembersAndFeatureMessages() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let huda = try await TestClient.signedIn(server, user: "huda")
        let omar = try await TestClient.signedIn(server, user: "omar")
        let made = try await huda.request("conv.create", ["title": "Trip", "members": ["omar"]])
        let group = try #require(made["data"]?["conversation"]?["id"]?.stringValue)
        _ = try await huda.request("msg.send", ["conversation": .string(group), "text": "Meet at 9", "clientMsgId": "h1"])
        let muted = try await huda.request("conv.mute", ["conversation": .string(group), "user": "omar", "seconds": 600])
        let until = try #require(muted["data"]?["mutedUntil"]?.intValue)
        #expect(try await omar.event("conv.updated") { $0["data"]?["mutedUntil"] != nil }["data"]?["mutedUntil"] == .int(until))
        let refused = try await omar.request("msg.send", ["conversation": .string(group), "text": "spam", "clientMsgId": "o1"])
        #expect(code(refused) == "forbidden", "\(refused)")
        #expect(code(try await omar.request("conv.mute", ["conversation": .string(group), "user": "huda", "seconds": 60])) == "forbidden")
        let listed = try await omar.request("conv.get", ["conversation": .string(group)])
        #expect(listed["data"]?["conversation"]?["mutedUntil"] == .int(until), "\(listed)")
        _ = try await huda.request("conv.mute", ["conversation": .string(group), "user": "omar", "seconds": 0])
        #expect(try await omar.request("msg.send", ["conversation": .string(group), "text": "ok", "clientMsgId": "o2"])["ok"] == true)

        _ = try await huda.request("msg.feature", ["conversation": .string(group), "seq": 1])
        let featured = try await omar.event("msg.updated")
        #expect(featured["data"]?["seq"] == 1 && featured["data"]?["featuredAt"]?.intValue != nil, "\(featured)")
        let details = try await omar.request("conv.get", ["conversation": .string(group)])
        #expect(details["data"]?["featured"]?.arrayValue?.map { $0["text"] } == ["Meet at 9"], "\(details)")
        #expect(code(try await omar.request("msg.feature", ["conversation": .string(group), "seq": 1])) == "forbidden")
        _ = try await huda.request("msg.feature", ["conversation": .string(group), "seq": 1, "featured": false])
        #expect(try await omar.request("conv.get", ["conversation": .string(group)])["data"]?["featured"] == [])
    }

    /// An edit and a revoke reach every member as the message now is; a revoked message keeps
    /// its number and sender in the history, and nothing of what it said.
    @Test func editsAndRevokesReachEveryoneAndLeaveATombstone() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let huda = try await TestClient.signedIn(server, user: "huda")
        let omar = try await TestClient.signedIn(server, user: "omar")
        let sent = try await huda.request("msg.send", ["to": "omar", "text": "see you at 5", "clientMsgId": "c1"])
        let direct = try #require(sent["data"]?["conversation"]?.stringValue)
        _ = try await omar.event("msg.new")
        #expect(code(try await omar.request("msg.edit", ["conversation": .string(direct), "seq": 1, "text": "mine now"])) == "forbidden")
        #expect(try await huda.request("msg.edit", ["conversation": .string(direct), "seq": 1, "text": "see you at 6"])["ok"] == true)
        let edited = try await omar.event("msg.updated")
        #expect(edited["data"]?["text"] == "see you at 6" && edited["data"]?["seq"] == 1 && edited["data"]?["editedAt"]?.intValue != nil)

        #expect(code(try await omar.request("msg.revoke", ["conversation": .string(direct), "seq": 1])) == "forbidden")
        #expect(try await huda.request("msg.revoke", ["conversation": .string(direct), "seq": 1])["ok"] == true)
        let revoked = try await omar.event("msg.updated")
        #expect(revoked["data"]?["revokedBy"] == "huda" && revoked["data"]?["text"] == nil)
        let history = try await omar.request("msg.sync", ["conversation": .string(direct)])
        let tombstone = try #require(history["data"]?["messages"]?.arrayValue?.first)
        #expect(tombstone["seq"] == 1 && tombstone["from"]?["id"] == "huda" && tombstone["text"] == nil && tombstone["revokedBy"] == "huda")
        #expect(code(try await huda.request("msg.edit", ["conversation": .string(direct), "seq": 1, "text": "back"])) == "bad_request")
        // Revoking it again changes nothing and is no error.
        #expect(try await huda.request("msg.revoke", ["conversation": .string(direct), "seq": 1])["ok"] == true)
    }

    /// A stranger writes a few messages and no more until answered (or until they share a
    /// group); a block stops direct messages both ways until it is lifted.
    @Test func strangersWriteAFewMessagesAndBlocksStopThemBothWays() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let huda = try await TestClient.signedIn(server, user: "huda")
        let omar = try await TestClient.signedIn(server, user: "omar")
        for index in 1...3 {
            #expect(try await omar.request("msg.send", ["to": "huda", "text": .string("hello \(index)"), "clientMsgId": .string("c\(index)")])["ok"] == true)
        }
        let fourth = try await omar.request("msg.send", ["to": "huda", "text": "hello?", "clientMsgId": "c4"])
        #expect(code(fourth) == "forbidden" && fourth["error"]?["message"]?.stringValue?.contains("written back") == true)
        let reply = try await huda.request("msg.send", ["to": "omar", "text": "hi", "clientMsgId": "h1"])
        let direct = try #require(reply["data"]?["conversation"]?.stringValue)
        #expect(try await omar.request("msg.send", ["to": "huda", "text": "hello?", "clientMsgId": "c4"])["ok"] == true)

        #expect(try await huda.request("user.block", ["user": "omar"])["ok"] == true)
        #expect(try await huda.request("user.blocks")["data"]?["users"] == ["omar"])
        #expect(code(try await omar.request("msg.send", ["conversation": .string(direct), "text": "why", "clientMsgId": "c5"])) == "forbidden")
        #expect(code(try await omar.request("msg.typing", ["conversation": .string(direct)])) == "forbidden")
        #expect(code(try await huda.request("msg.send", ["to": "omar", "text": "bye", "clientMsgId": "h2"])) == "forbidden")
        #expect(code(try await huda.request("user.block", ["user": "huda"])) == "bad_request")
        #expect(try await huda.request("user.unblock", ["user": "omar"])["ok"] == true)
        #expect(try await omar.request("msg.send", ["conversation": .string(direct), "text": "friends?", "clientMsgId": "c5"])["ok"] == true)

        // Sharing a group, a user may write first without the stranger's limit.
        let zaid = try await TestClient.signedIn(server, user: "zaid")
        _ = try await huda.request("conv.create", ["title": "Book club", "members": ["zaid", "omar"]])
        for index in 1...4 {
            #expect(try await zaid.request("msg.send", ["to": "omar", "text": .string("z\(index)"), "clientMsgId": .string("z\(index)")])["ok"] == true)
        }
    }

    /// With webhooks for messages, the app's backend hears of each message with the members who
    /// were offline (to notify by push), and of each report.
    @Test func theBackendHearsOfMessagesWithWhoWasOfflineAndOfReports() async throws {
        let secret = TestServer.newSecret()
        let receiver = try WebhookReceiver(secret: secret)
        defer { receiver.stop() }
        let server = try TestServer(secret: secret) { config in
            config.webhooks.endpoints = [receiver.url]
            config.webhooks.includeMessages = true
        }
        defer { server.destroy() }
        let huda = try await TestClient.signedIn(server, user: "huda")
        let zaid = try await TestClient.signedIn(server, user: "zaid")
        let made = try await huda.request("conv.create", ["title": "Trip", "members": ["zaid", "omar"]])
        let group = try #require(made["data"]?["conversation"]?["id"]?.stringValue)
        _ = try await huda.request("msg.send", ["conversation": .string(group), "text": "tickets booked", "clientMsgId": "c1"])
        _ = try await zaid.request("msg.report", ["conversation": .string(group), "seq": 1, "reason": "spam"])
        #expect(await eventually { receiver.posts.count >= 2 })
        let posts = receiver.posts.map(\.body)
        let created = try #require(posts.first { $0["type"] == "message.created" })
        #expect(created["conversation"]?.stringValue == group && created["room"] == nil && created["seq"] == 1)
        #expect(created["data"]?["message"]?["text"] == "tickets booked" && created["data"]?["offline"] == ["omar"])
        let reported = try #require(posts.first { $0["type"] == "message.reported" })
        #expect(reported["data"]?["by"] == "zaid" && reported["data"]?["reason"] == "spam" && reported["data"]?["message"]?["seq"] == 1 && reported["seq"] == 2)
        #expect(receiver.posts.allSatisfy { $0.signatureValid })
        #expect(code(try await zaid.request("msg.report", ["conversation": .string(group), "seq": 5])) == "bad_request")
    }

    @Test func mutedAndPinnedFollowTheUserToItsOtherDevices() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let phone = try await TestClient.signedIn(server, user: "huda", device: "phone")
        let web = try await TestClient.signedIn(server, user: "huda", device: "web")
        let sent = try await phone.request("msg.send", ["to": "omar", "text": "hi", "clientMsgId": "c"])
        let direct = try #require(sent["data"]?["conversation"]?.stringValue)
        _ = try await web.event("msg.new")
        #expect(try await phone.request("conv.settings", ["conversation": .string(direct), "muted": true, "pinned": true])["ok"] == true)
        let change = try await web.event("conv.updated")
        #expect(change["data"]?["muted"] == true && change["data"]?["pinned"] == true)
        let entry = try await web.request("conv.get", ["conversation": .string(direct)])
        #expect(entry["data"]?["conversation"]?["muted"] == true && entry["data"]?["conversation"]?["pinned"] == true)
    }

    /// A room's events go to the device that joined it last; the one before is told it is
    /// elsewhere and keeps its connection (and its messages). The same device connecting again
    /// still replaces its older connection, as before devices.
    @Test func aRoomFollowsTheDeviceThatJoinedItLast() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let phone = try await TestClient.signedIn(server, user: "huda", device: "phone")
        try await phone.call("room.create", room: "salon")
        let web = try await TestClient.signedIn(server, user: "huda", device: "web")
        try await web.call("room.join", room: "salon")
        let moved = try await phone.event("you.elsewhere")
        #expect(moved["room"] == "salon")
        #expect(!phone.isClosed)

        let guest = try await TestClient.signedIn(server, user: "guest")
        try await guest.call("room.join", room: "salon")
        _ = try await web.event("member.joined")
        // The phone still gets Huda's messages.
        _ = try await guest.request("msg.send", ["to": "huda", "text": "hi", "clientMsgId": "c"])
        _ = try await phone.event("msg.new")
        #expect(!phone.pendingEvents.contains { $0["ev"] == "member.joined" })

        let webAgain = try await TestClient.signedIn(server, user: "huda", device: "web")
        #expect(try await web.closed() == 4004)
        #expect(try await webAgain.request("ping")["ok"] == true)
    }
}
