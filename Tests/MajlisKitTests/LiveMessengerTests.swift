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
}
