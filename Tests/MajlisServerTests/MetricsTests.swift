import Foundation
import MajlisLab
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import MajlisTransport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `GET /metrics`: Prometheus text that Prometheus's own checker accepts, counting what happened.
@Suite struct MetricsTests {
    static func scrape(_ server: TestServer) async throws -> String {
        let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.server.port)/metrics")!)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        return String(decoding: data, as: UTF8.self)
    }

    /// The value of the sample written exactly as `series` (name and labels).
    static func value(_ text: String, _ series: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test func countsWhatHappenedAndPassesPromtool() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        let listener = try await TestClient.signedIn(server, user: "listener")
        let intruder = try await TestClient.signedIn(server, user: "intruder")
        let hostMedia = try RawMediaClient(snapshot: try await host.call("room.create", room: "stage"))
        let listenerMedia = try RawMediaClient(snapshot: try await listener.call("room.join", room: "stage"))
        let intruderMedia = try RawMediaClient(snapshot: try await intruder.call("room.join", room: "stage"))
        for media in [hostMedia, listenerMedia, intruderMedia] { #expect(media.bind()) }
        try await host.call("seat.take", room: "stage", ["index": 0])
        await #expect(throws: ProtocolError.self) { try await listener.call("seat.take", room: "stage", ["index": 0]) }
        try await listener.call("chat.send", room: "stage", ["text": "hi", "clientMsgId": "c1"])
        try await host.call("member.kick", room: "stage", ["user": "intruder", "banSeconds": 60])
        let stranger = try await TestClient.connect(server.url)
        _ = try await stranger.request("hello", ["token": "not-a-token"])
        for payload: UInt8 in 1...3 { try hostMedia.send([payload]) }
        for _ in 1...3 { _ = try #require(try listenerMedia.receive()) }
        try intruderMedia.send([9])

        var text = ""
        let settled = await eventually {
            text = (try? await Self.scrape(server)) ?? ""
            return Self.value(text, "majlis_media_packets_dropped_total{reason=\"unbound\"}") ?? 0 >= 1
                && Self.value(text, "majlis_media_forwarding_seconds_count") ?? 0 >= 3
                && Self.value(text, "majlis_connections") == 2  // the kicked and the refused are let go
        }
        #expect(settled, "\(text)")
        #expect(Self.value(text, "majlis_room_members") == 2 && Self.value(text, "majlis_seats_taken") == 1)
        #expect(Self.value(text, #"majlis_node_info{node="majlis-1",version="\#(SignalingServer.version)"}"#) == 1)
        #expect(Self.value(text, #"majlis_ops_total{op="room.join",result="ok"}"#) == 2)
        #expect(Self.value(text, #"majlis_ops_total{op="seat.take",result="seat_occupied"}"#) == 1)
        #expect(Self.value(text, #"majlis_op_duration_seconds_count{op="seat.take"}"#) == 2)
        #expect(Self.value(text, "majlis_chat_messages_total") == 1)
        #expect(Self.value(text, "majlis_kicks_total") == 1 && Self.value(text, "majlis_bans_total") == 1)
        #expect(Self.value(text, "majlis_logins_rejected_total") == 1)
        #expect(Self.value(text, "majlis_media_packets_forwarded_total") == 3)
        #expect(Self.value(text, "majlis_store_write_seconds_count") ?? 0 >= 3)

        // Prometheus's own checker (Debian's prometheus package) finds nothing wrong.
        let promtool = try #require(ServerAPITests.which("promtool"), "promtool is installed by scripts/install-deps --test")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID().uuidString).txt").path
        let report = file + ".report"
        defer {
            try? FileManager.default.removeItem(atPath: file)
            try? FileManager.default.removeItem(atPath: report)
        }
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let status = try await offPool { try ChildProcess.run(["/bin/sh", "-c", #"exec "$0" check metrics < "$1""#, promtool, file], output: report) }
        #expect(status == 0, "\((try? String(contentsOfFile: report, encoding: .utf8)) ?? "")")
    }
}
