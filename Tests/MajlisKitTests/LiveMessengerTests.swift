import Foundation
import MajlisKit
import MajlisServer
import MajlisTestSupport
import Testing

/// The SDK's conversations against the real server: two users on three devices write, read and
/// catch up.
@Suite struct LiveMessengerTests {
    func messenger(_ server: TestServer, _ user: String, device: String) async throws -> (Messenger, LiveSignalingClient) {
        var options = LiveSignalingClient.Options()
        options.device = device
        let client = LiveSignalingClient(url: server.url, token: server.token(user), options: options)
        _ = try await client.connect()
        let messenger = Messenger(signaling: client)
        try await messenger.start()
        return (messenger, client)
    }

    @Test func twoUsersOnThreeDevicesWriteReadAndCatchUp() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let (hudaPhone, phone) = try await messenger(server, "huda", device: "phone")
        let (omar, omarClient) = try await messenger(server, "omar", device: "phone")
        let sent = try #require(try await hudaPhone.send(text: "مرحبا يا عمر", to: .user("omar")))
        #expect(await eventually { await omar.state.messages[sent.conversation]?.last?.text == "مرحبا يا عمر" })
        let omars = await omar.state
        #expect(omars.unread == 1 && omars.conversations[sent.conversation]?.peer == "huda")
        try await omar.markRead(sent.conversation)
        _ = try await omar.send(text: "وعليكم السلام", to: .conversation(sent.conversation))
        #expect(await eventually { await hudaPhone.state.messages[sent.conversation]?.map(\.seq) == [1, 2] })
        // Huda's web page, opened later, catches up from nothing.
        let (hudaWeb, web) = try await messenger(server, "huda", device: "web")
        #expect(await hudaWeb.state.messages[sent.conversation]?.map(\.text) == ["مرحبا يا عمر", "وعليكم السلام"])
        #expect(await hudaWeb.state.unread == 1)
        // Found by a word, without its article, page by page.
        let first = try await hudaWeb.search("سلام", limit: 1)
        #expect(first.messages.map(\.seq) == [2] && first.next == nil)
        _ = try await omar.send(text: "السلام مرة أخرى", to: .conversation(sent.conversation))
        let newest = try await hudaWeb.search("سلام", limit: 1)
        #expect(newest.messages.map(\.seq) == [3])
        let cursor: String = try #require(newest.next)
        let next = try await hudaWeb.search("سلام", after: cursor, limit: 1)
        #expect(next.messages.map(\.seq) == [2])
        await phone.disconnect()
        await web.disconnect()
        await omarClient.disconnect()
    }

    /// Contacts' presence in the state: asked at each sync, kept current by `presence.changed`,
    /// and hidden once a contact shares it with nobody.
    @Test func contactsPresenceFollowsThemComingAndGoing() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let (huda, hudaClient) = try await messenger(server, "huda", device: "phone")
        let (omar, omarClient) = try await messenger(server, "omar", device: "phone")
        let sent = try #require(try await huda.send(text: "hi", to: .user("omar")))
        #expect(await eventually { await omar.state.messages[sent.conversation]?.count == 1 })
        _ = try await omar.send(text: "hello", to: .conversation(sent.conversation))
        // Contacts now: asked, Omar is online; a sync asks too.
        #expect(try await huda.presence(of: ["omar"]) == [UserPresence(user: "omar", online: true)])
        try await omar.refresh()
        #expect(await omar.state.presence["huda"]?.online == true)
        await hudaClient.disconnect()
        #expect(await eventually { await omar.state.presence["huda"]?.online == false })
        #expect(await omar.state.presence["huda"]?.lastSeen != nil)
        #expect(try await omar.sharePresence() == .contacts)
        let (hudaAgain, again) = try await messenger(server, "huda", device: "phone")
        #expect(await eventually { await omar.state.presence["huda"]?.online == true })
        #expect(try await omar.sharePresence(.nobody) == .nobody)
        #expect(await eventually { await hudaAgain.state.presence["omar"]?.hidden == true })
        await again.disconnect()
        await omarClient.disconnect()
    }

    /// Public groups through the SDK: found, joined at once or on request, and the request
    /// reaches the owner's state as it comes.
    @Test func publicGroupsAreFoundAndJoined() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let (huda, hudaClient) = try await messenger(server, "huda", device: "phone")
        let (omar, omarClient) = try await messenger(server, "omar", device: "phone")
        let open = try await huda.createGroup(title: "Hiking", members: [], access: .open, about: "Weekend walks")
        let asks = try await huda.createGroup(title: "Book club", members: [], access: .request)
        let found = try await omar.discover("walks")
        #expect(found.groups.map(\.id) == [open.id] && found.next == nil)
        #expect(try await omar.join(open.id))
        #expect(await omar.state.conversations[open.id]?.access == .open)
        #expect(try await !omar.join(asks.id, note: "I read a lot"))
        #expect(await eventually { await huda.state.joinRequests[asks.id]?.map(\.note) == ["I read a lot"] })
        try await huda.answerRequest(in: asks.id, from: "omar", accept: true)
        #expect(await eventually { await omar.state.conversations[asks.id]?.title == "Book club" })
        #expect(await huda.state.joinRequests[asks.id] == [])
        await hudaClient.disconnect()
        await omarClient.disconnect()
    }
}
