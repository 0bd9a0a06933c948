import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// The server API's conversations, against a real server with members connected: the app's
/// backend makes a group, adds and removes members, posts as the system and as a bot, deletes a
/// message, and releases or rejects a stranger's held messages; members' devices hear each.
@Suite struct ConversationAPITests {
    typealias API = ServerAPITests

    @Test func aBackendRunsAGroupAndPostsAsTheSystemAndABot() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let huda = try await TestClient.signedIn(server, user: "huda")
        let omar = try await TestClient.signedIn(server, user: "omar")
        let sara = try await TestClient.signedIn(server, user: "sara")

        let created = try await API.call(server, "POST", "/v1/conversations", #"{"title":"رحلة","owner":"huda","members":["omar"]}"#)
        let id = try #require(created.body["id"]?.stringValue, "\(created)")
        #expect(created.status == 201 && created.body["owner"] == "huda" && created.body["memberCount"] == 2 && created.body["kind"] == "group")
        for member in [huda, omar] {
            let told = try await member.event("conv.updated")
            #expect(told["data"]?["conversation"] == .string(id) && told["data"]?["by"] == "backend", "\(told)")
        }
        let added = try await API.call(server, "POST", "/v1/conversations/\(id)/members", #"{"users":["sara","omar"]}"#)
        #expect(added.status == 200 && added.body["added"] == ["sara"], "\(added)")
        #expect(try await sara.event("conv.updated")["data"]?["joined"] == ["sara"])

        // As the system, then as a bot; the same Idempotency-Key posts once.
        let system = try await API.call(server, "POST", "/v1/conversations/\(id)/messages", #"{"text":"Welcome to the group"}"#, headers: ["Idempotency-Key": "w1"])
        #expect(system.status == 200 && system.body["seq"] == 1, "\(system)")
        let again = try await API.call(server, "POST", "/v1/conversations/\(id)/messages", #"{"text":"Welcome to the group"}"#, headers: ["Idempotency-Key": "w1"])
        #expect(again.body["seq"] == 1 && again.body["duplicate"] == true, "\(again)")
        for member in [huda, omar, sara] {
            let message = try await member.event("msg.new")
            #expect(message["data"]?["from"] == ["id": "system", "name": "System"] && message["data"]?["text"] == "Welcome to the group")
        }
        let card = try await API.call(
            server, "POST", "/v1/conversations/\(id)/messages",
            #"{"from":{"id":"bot-trips","name":"Trips"},"type":"trip_card","payload":{"days":3},"fallback":"A 3-day trip"}"#)
        #expect(card.body["seq"] == 2, "\(card)")
        _ = try await omar.event("msg.new") { $0["data"]?["seq"] == 2 }
        let direct = try await API.call(server, "POST", "/v1/users/omar/messages", #"{"from":{"id":"bot-trips","name":"Trips"},"text":"Your trip is booked"}"#)
        #expect(direct.status == 200 && direct.body["seq"] == 1, "\(direct)")
        let dm = try await omar.event("msg.new") { $0["data"]?["from"]?["id"] == "bot-trips" && $0["data"]?["seq"] == 1 }
        #expect(dm["data"]?["text"] == "Your trip is booked")
        let listed = try await omar.request("conv.list")
        #expect(listed["data"]?["conversations"]?.arrayValue?.contains { $0["peer"] == "bot-trips" } == true, "\(listed)")

        // Deleted: a tombstone revoked by the backend, for every member.
        let deleted = try await API.call(server, "DELETE", "/v1/conversations/\(id)/messages/2")
        #expect(deleted.status == 200, "\(deleted)")
        let tombstone = try await sara.event("msg.updated")
        #expect(tombstone["data"]?["revokedBy"] == "backend" && tombstone["data"]?["fallback"] == nil)
        let messages = try await API.call(server, "GET", "/v1/conversations/\(id)/messages?after=0&limit=10")
        #expect(messages.body["messages"]?.arrayValue?.map { $0["seq"] } == [1, 2] && messages.body["more"] == false, "\(messages)")

        // Removed by the backend; the owner too, whose group passes on.
        #expect(try await API.call(server, "DELETE", "/v1/conversations/\(id)/members/omar").status == 200)
        let removed = try await omar.event("conv.removed")
        #expect(removed["data"]?["reason"] == "removed" && removed["data"]?["by"] == "backend")
        #expect(try await API.call(server, "DELETE", "/v1/conversations/\(id)/members/huda").status == 200)
        let details = try await API.call(server, "GET", "/v1/conversations/\(id)")
        #expect(details.body["conversation"]?["owner"] == "sara" && details.body["members"]?.arrayValue?.count == 1, "\(details)")
    }

    @Test func badConversationCallsAreRefusedClearly() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let cases: [(String, String, String?, Int, String)] = [
            ("POST", "/v1/conversations", #"{"title":"T"}"#, 400, "bad_request"),
            ("POST", "/v1/conversations", #"{"title":"","owner":"huda"}"#, 400, "bad_request"),
            ("POST", "/v1/conversations", #"{"title":"T","owner":"huda","colour":"red"}"#, 400, "bad_request"),
            ("GET", "/v1/conversations/g-none", nil, 404, "conversation_not_found"),
            ("POST", "/v1/conversations/g-none/messages", #"{"text":"hi"}"#, 404, "conversation_not_found"),
            ("POST", "/v1/users/omar/messages", #"{"text":"hi"}"#, 400, "bad_request"),
            ("POST", "/v1/users/omar/messages", #"{"from":{"id":"omar"},"text":"hi"}"#, 403, "forbidden"),
            ("POST", "/v1/users/omar/messages", #"{"from":{"id":"bot"},"text":"hi","payload":null}"#, 400, "bad_request"),
            ("DELETE", "/v1/conversations/g-none/members/bad%20id", nil, 400, "bad_request"),
            ("DELETE", "/v1/conversations/g-none/messages/x", nil, 400, "bad_request"),
            ("POST", "/v1/held-messages/h-none/release", nil, 404, "message_not_found"),
            ("POST", "/v1/held-messages/h-none/reject", #"{"reason":7}"#, 400, "bad_request"),
        ]
        for (method, path, body, status, code) in cases {
            let answer = try await API.call(server, method, path, body)
            #expect(answer.status == status && answer.body["error"]?["code"] == .string(code), "\(method) \(path): \(answer)")
        }
        let direct = try await API.call(server, "POST", "/v1/users/omar/messages", #"{"from":{"id":"bot"},"text":"hi"}"#)
        let id = try #require(direct.body["conversation"]?.stringValue)
        #expect(try await API.call(server, "POST", "/v1/conversations/\(id)/members", #"{"users":["sara"]}"#).body["error"]?["code"] == "conflict")
        #expect(try await API.call(server, "DELETE", "/v1/conversations/\(id)/messages/9").body["error"]?["code"] == "message_not_found")
        // A token for one room is not the backend's for conversations.
        let roomToken = API.adminToken(server, room: "salon")
        #expect(try await API.call(server, "GET", "/v1/conversations/\(id)", token: roomToken).status == 403)
    }

    /// With `--stranger-overflow hold`, a stranger's message past the limit is held: answered
    /// `held`, listed for the backend, which releases it (delivered once, to both) or rejects it
    /// (its sender's devices are told).
    @Test func aStrangersHeldMessageIsReleasedOrRejectedByTheBackend() async throws {
        let secret = TestServer.newSecret()
        let receiver = try WebhookReceiver(secret: secret)
        defer { receiver.stop() }
        let server = try TestServer(secret: secret) { config in
            config.strangerMessages = 1
            config.strangerOverflow = "hold"
            config.webhooks.endpoints = [receiver.url]
        }
        defer { server.destroy() }
        let huda = try await TestClient.signedIn(server, user: "huda")
        let zaid = try await TestClient.signedIn(server, user: "zaid")
        let first = try await zaid.request("msg.send", ["to": "huda", "text": "Hello", "clientMsgId": "z1"])
        #expect(first["data"]?["seq"] == 1, "\(first)")
        _ = try await huda.event("msg.new")
        var held: [String] = []
        for (index, text) in ["Are you there?", "Buy followers now"].enumerated() {
            let answer = try await zaid.request("msg.send", ["to": "huda", "text": .string(text), "clientMsgId": .string("z\(index + 2)")])
            let id = try #require(answer["data"]?["held"]?.stringValue, "\(answer)")
            #expect(answer["data"]?["seq"] == nil)
            held.append(id)
        }
        let retried = try await zaid.request("msg.send", ["to": "huda", "text": "Are you there?", "clientMsgId": "z2"])
        #expect(retried["data"]?["held"] == .string(held[0]) && retried["data"]?["duplicate"] == true, "\(retried)")
        // The backend hears of each, in order.
        #expect(await eventually { receiver.posts.filter { $0.body["type"] == "message.held" }.count == 2 })
        let heard = receiver.posts.filter { $0.body["type"] == "message.held" }.map { $0.body["data"]?["message"]?["id"] }
        #expect(heard == held.map(JSONValue.string), "\(heard)")
        let listed = try await API.call(server, "GET", "/v1/held-messages")
        #expect(listed.body["messages"]?.arrayValue?.map { $0["id"] } == held.map(JSONValue.string), "\(listed)")
        let oldest = listed.body["messages"]?.arrayValue?.first
        #expect(oldest?["from"]?["id"] == "zaid" && oldest?["to"] == "huda" && oldest?["text"] == "Are you there?")

        let released = try await API.call(server, "POST", "/v1/held-messages/\(held[0])/release")
        #expect(released.status == 200 && released.body["seq"] == 2, "\(released)")
        for client in [huda, zaid] {
            let message = try await client.event("msg.new") { $0["data"]?["seq"] == 2 }
            #expect(message["data"]?["text"] == "Are you there?" && message["data"]?["clientMsgId"] == "z2")
        }
        // Released once: the sender's retry is the message it became; a second release finds nothing.
        let after = try await zaid.request("msg.send", ["to": "huda", "text": "Are you there?", "clientMsgId": "z2"])
        #expect(after["data"]?["seq"] == 2 && after["data"]?["duplicate"] == true, "\(after)")
        #expect(try await API.call(server, "POST", "/v1/held-messages/\(held[0])/release").status == 404)

        let rejected = try await API.call(server, "POST", "/v1/held-messages/\(held[1])/reject", #"{"reason":"spam"}"#)
        #expect(rejected.status == 200, "\(rejected)")
        let told = try await zaid.event("msg.rejected")
        #expect(told["data"]?["clientMsgId"] == "z3" && told["data"]?["reason"] == "spam")
        #expect(try await API.call(server, "GET", "/v1/held-messages").body["messages"] == [])
        let history = try await huda.request("msg.sync", ["conversation": .string(try #require(first["data"]?["conversation"]?.stringValue))])
        #expect(history["data"]?["messages"]?.arrayValue?.map { $0["text"] } == ["Hello", "Are you there?"])
    }
}
