import Foundation
import MajlisKit
import MajlisProtocol
import MajlisTestSupport
import MajlisTransport
import Synchronization
import Testing

/// A WebSocket server that answers `hello`, and drops the first `chat.send` it sees.
final class ForgetfulServer: WebSocketDelegate, Sendable {
    let rids = Mutex<[String]>([])

    func webSocketDidOpen(_ connection: WebSocketConnection) {}
    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {}

    func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {
        guard let frame = try? JSONDecoder().decode(JSONValue.self, from: message), let id = frame["id"]?.intValue else { return }
        switch frame["op"]?.stringValue {
        case "hello":
            connection.send(Data(#"{"re":\#(id),"ok":true,"data":{"session":"s1","user":{"id":"me","name":"Me"},"heartbeat":20,"expiresAt":9999999999,"resumed":false,"rooms":[]}}"#.utf8))
        case "chat.send":
            let count = rids.withLock { rids in
                rids.append(frame["rid"]?.stringValue ?? "")
                return rids.count
            }
            if count > 1 { connection.send(Data(#"{"re":\#(id),"ok":true,"data":{"msgId":7,"ts":1}}"#.utf8)) }
        default:
            connection.send(Data(#"{"re":\#(id),"ok":true,"data":{}}"#.utf8))
        }
    }
}

@Suite struct LiveSignalingClientTests {
    @Test func aTimedOutRequestIsRetriedWithTheSameRid() async throws {
        let stub = ForgetfulServer()
        let server = try WebSocketServer(host: "127.0.0.1", port: 0, delegate: stub, http: { $0.respond(HTTPResponse(status: 404, body: [])) })
        defer { server.stop() }
        let clock = ManualClock()
        let client = LiveSignalingClient(url: "ws://127.0.0.1:\(server.port)/v1/signal", token: "t", clock: clock)
        let session = try await client.connect()
        #expect(session.userId == "me")
        let sent = Task { try await client.request("chat.send", ["room": "r", "text": "once", "clientMsgId": "c1"]) }
        // Once the request is out, let it time out (a timer set after the clock moved wakes at once).
        while stub.rids.withLock({ $0.count }) < 1 { await Task.yield() }
        clock.advance(by: 5_000)
        let data = try await sent.value
        #expect(data["msgId"] == 7)
        let rids = stub.rids.withLock { $0 }
        #expect(rids.count == 2)
        #expect(rids[0] == rids[1] && !rids[0].isEmpty)
        await client.disconnect()
    }

    @Test func givesUpAfterThreeTries() async throws {
        let stub = ForgetfulServer()
        let server = try WebSocketServer(host: "127.0.0.1", port: 0, delegate: stub, http: { $0.respond(HTTPResponse(status: 404, body: [])) })
        defer { server.stop() }
        let clock = ManualClock()
        var options = LiveSignalingClient.Options()
        options.maxTries = 1
        let client = LiveSignalingClient(url: "ws://127.0.0.1:\(server.port)/v1/signal", token: "t", options: options, clock: clock)
        _ = try await client.connect()
        let sent = Task { () async throws(MajlisError) -> JSONValue in try await client.request("chat.send", ["room": "r"]) }
        while stub.rids.withLock({ $0.count }) < 1 { await Task.yield() }
        clock.advance(by: 5_000)
        do {
            _ = try await sent.value
            Issue.record("expected a timeout")
        } catch {
            #expect(error as? MajlisError == .timedOut(op: "chat.send"))
        }
        await client.disconnect()
    }

    /// An app that lets go of a client whose connection was lost (without `disconnect()`) lets
    /// go of it: its reconnect and heartbeat tasks do not keep it, reconnecting, for minutes.
    @Test func aDroppedClientStopsReconnecting() async throws {
        let stub = ForgetfulServer()
        let server = try WebSocketServer(host: "127.0.0.1", port: 0, delegate: stub, http: { $0.respond(HTTPResponse(status: 404, body: [])) })
        let clock = ManualClock()
        var client: LiveSignalingClient? = LiveSignalingClient(url: "ws://127.0.0.1:\(server.port)/v1/signal", token: "t", clock: clock)
        weak let weakClient = client
        let events = client!.subscribe()
        _ = try await client!.connect()
        server.stop()
        for await event in events {
            if case .connectionLost = event { break }
        }
        // The reconnect task waits on the clock for its first attempt.
        while clock.sleeperCount < 1 { await Task.yield() }
        client = nil
        #expect(await eventually { weakClient == nil }, "the client is still alive, reconnecting")
    }

    @Test func unreachableServerFailsClearly() async throws {
        let client = LiveSignalingClient(url: "ws://127.0.0.1:1/v1/signal", token: "t")
        do {
            _ = try await client.connect()
            Issue.record("connected to nothing")
        } catch {
            #expect(error == .notConnected)
        }
    }
}
