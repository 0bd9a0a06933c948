import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Presence of contacts on one node: told as users come and go, asked with `presence.get`,
/// hidden where a user shares it with nobody, and taken back for the sessions of a node that
/// stopped without closing them. Across nodes in `ClusterMessagingTests`.
@Suite struct PresenceTests {
    /// Huda and Omar wrote to each other (contacts); Zaid wrote to Huda unanswered (not one).
    static func acquaint(_ server: TestServer) throws {
        let store = server.server.store
        func post(_ from: String, _ to: String, in id: String, _ client: String) throws {
            _ = try store.post(MessageDraft(text: "hi", clientMsgId: client), in: id, from: UserRef(id: from, name: from), direct: (from, to), now: 1)
        }
        try post("huda", "omar", in: "d-huda-omar", "h1")
        try post("omar", "huda", in: "d-huda-omar", "o1")
        try post("zaid", "huda", in: "d-huda-zaid", "z1")
    }

    /// `op`'s data; an error fails the test.
    @discardableResult
    static func ask(_ client: TestClient, _ op: String, _ args: [String: JSONValue] = [:]) async throws -> JSONValue {
        let answer = try await client.request(op, args)
        #expect(answer["ok"] == true, "\(op): \(answer)")
        return answer["data"] ?? .null
    }

    /// The next `presence.changed` `client` gets about `user`.
    static func change(_ client: TestClient, of user: String) async throws -> JSONValue {
        try await client.event("presence.changed") { $0["data"]?["user"] == .string(user) }["data"] ?? .null
    }

    @Test func contactsHearAUserComeAndGoOnceWhateverTheDevices() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        try Self.acquaint(server)
        let omar = try await TestClient.signedIn(server, user: "omar")
        let zaid = try await TestClient.signedIn(server, user: "zaid")
        // Never seen: offline, no time; Zaid is not Omar's contact: not listed.
        let before = try await Self.ask(omar, "presence.get", ["users": ["huda", "zaid"]])
        #expect(before["presence"] == .array([["user": "huda", "online": false]]), "\(before)")

        let phone = try await TestClient.signedIn(server, user: "huda", device: "phone")
        let online = try await Self.change(omar, of: "huda")
        #expect(online["online"] == true && online["lastSeen"] == nil, "\(online)")
        let now = try await Self.ask(omar, "presence.get", ["users": ["huda"]])
        #expect(now["presence"]?.arrayValue?.first?["online"] == true, "\(now)")
        // Zaid is not Huda's contact: told nothing, and asking tells nothing.
        #expect(try await Self.ask(zaid, "presence.get", ["users": ["huda"]])["presence"] == .array([]))

        // A second device, then the first gone: still online, nothing told. The next change
        // Omar hears is the last device going.
        let web = try await TestClient.signedIn(server, user: "huda", device: "web")
        phone.disconnect()
        _ = try await phone.closed()
        web.disconnect()
        let offline = try await Self.change(omar, of: "huda")
        #expect(offline["online"] == false && offline["lastSeen"]?.intValue != nil, "\(offline)")
        #expect(!zaid.pendingEvents.contains { $0["ev"] == "presence.changed" })
    }

    @Test func aUserWhoSharesWithNobodyIsHidden() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        try Self.acquaint(server)
        let omar = try await TestClient.signedIn(server, user: "omar")
        let huda = try await TestClient.signedIn(server, user: "huda")
        _ = try await Self.change(omar, of: "huda")
        #expect(try await Self.ask(huda, "presence.share")["share"] == "contacts")
        #expect(try await Self.ask(huda, "presence.share", ["share": "nobody"])["share"] == "nobody")
        let hidden = try await Self.change(omar, of: "huda")
        #expect(hidden["hidden"] == true && hidden["online"] == false, "\(hidden)")
        #expect(try await Self.ask(omar, "presence.get", ["users": ["huda"]])["presence"]?.arrayValue?.first?["hidden"] == true)
        // Sharing again tells what is so.
        _ = try await Self.ask(huda, "presence.share", ["share": "contacts"])
        let shown = try await Self.change(omar, of: "huda")
        #expect(shown["online"] == true && shown["hidden"] == nil, "\(shown)")
        let bad = try await huda.request("presence.share", ["share": "everyone"])
        #expect(bad["error"]?["code"] == "bad_request", "\(bad)")
        let none = try await huda.request("presence.get", ["users": .array([])])
        #expect(none["error"]?["code"] == "bad_request", "\(none)")
    }

    /// The sessions a server had when it stopped without closing them are over when it starts
    /// again; those of a node that is gone (not this one, not listed) are over once found.
    @Test func sessionsOfAStoppedOrGoneNodeAreTakenBack() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-presence-\(UUID().uuidString)").path
        let first = try TestServer(dataDirectory: directory)
        try Self.acquaint(first)
        first.stop()
        // Left as a server killed mid-session leaves it: Omar online through this node.
        let node = first.config.node
        #expect(try first.server.store.cameOnline("omar", node: node, now: 1_000))

        let server = try TestServer(dataDirectory: directory, secret: first.secret)
        defer { server.destroy() }
        let huda = try await TestClient.signedIn(server, user: "huda")
        let omar = try await Self.ask(huda, "presence.get", ["users": ["omar"]])
        #expect(omar["presence"]?.arrayValue?.first?["online"] == false && omar["presence"]?.arrayValue?.first?["lastSeen"]?.intValue != nil, "\(omar)")

        // Omar on a node of the cluster that died (it is not listed): once a sweep finds the
        // node gone, Huda is told he is offline.
        #expect(try server.server.store.cameOnline("omar", node: "gone-node", now: 1_000))
        let gone = try await Self.change(huda, of: "omar")
        #expect(gone["online"] == false && gone["lastSeen"]?.intValue != nil, "\(gone)")
        #expect(try server.server.store.presenceNodes(missingFrom: [node], before: .max).isEmpty)
    }
}
