import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Synchronization
import Testing

/// Structured logs: with `--log-format json`, one JSON object per line, and the events operators
/// look for carry a name and fields.
@Suite struct LogTests {
    final class Lines: Sendable {
        let all = Mutex<[String]>([])
        func events(_ name: String) -> [JSONValue] {
            all.withLock { $0 }.compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }.filter { $0["event"]?.stringValue == name }
        }
    }

    @Test func rejectedLoginsAndJoinsKicksBansAndStoreErrorsAreJSONLines() async throws {
        let lines = Lines()
        let logger = Logger(label: "majlis", level: .info, format: .json) { line in lines.all.withLock { $0.append(line) } }
        let server = try TestServer(logger: logger)
        defer { server.destroy() }
        let stranger = try await TestClient.connect(server.url)
        _ = try await stranger.request("hello", ["token": "forged"])
        let host = try await TestClient.signedIn(server, user: "host")
        try await host.call("room.create", room: "r")
        let guest = try await TestClient.signedIn(server, user: "guest")
        try await guest.call("room.join", room: "r")
        try await host.call("member.kick", room: "r", ["user": "guest"])
        let again = try await TestClient.signedIn(server, user: "guest")
        try await again.call("room.join", room: "r")
        try await host.call("member.kick", room: "r", ["user": "guest", "banSeconds": 60])
        let banned = try await TestClient.signedIn(server, user: "guest")
        await #expect(throws: ProtocolError.self) { try await banned.call("room.join", room: "r") }
        await #expect(throws: ProtocolError.self) { try await banned.call("room.join", room: "nowhere") }
        try server.server.store.setReadOnly(true)
        await #expect(throws: ProtocolError.self) { try await host.call("chat.send", room: "r", ["text": "lost?", "clientMsgId": "c1"]) }
        try server.server.store.setReadOnly(false)

        // Every line is one JSON object with time, level, label and message.
        for line in lines.all.withLock({ $0 }) {
            let object = try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
            #expect(object["time"] != nil && object["level"] != nil && object["label"] == "majlis" && object["message"] != nil, "\(line)")
        }
        #expect(lines.events("login.rejected").first?["level"] == "warning")
        // Logged as the kick's events go out, just after the kicker's answer.
        #expect(await eventually { lines.events("member.banned").first?["until"] != nil })
        #expect(lines.events("member.kicked").first?["user"] == "guest" && lines.events("member.kicked").first?["by"] == "host")
        #expect(lines.events("join.rejected").map { $0["code"]?.stringValue ?? "" }.sorted() == ["banned", "room_not_found"])
        let store = try #require(lines.events("store.error").first)
        #expect(store["room"] == "r" && store["level"] == "error")
    }
}
