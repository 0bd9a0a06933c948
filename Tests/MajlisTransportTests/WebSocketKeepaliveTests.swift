import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization
import Testing

/// Keeps the connections a WebSocket server opens, and ignores what they say.
final class OpenedConnections: WebSocketDelegate, Sendable {
    let opened = Mutex<[WebSocketConnection]>([])

    func webSocketDidOpen(_ connection: WebSocketConnection) { opened.withLock { $0.append(connection) } }
    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {}
    func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {}
}

@Suite struct WebSocketKeepaliveTests {
    /// A peer that says nothing but answers pings is heard: its pong counts as hearing it, on
    /// either side, so a server's heartbeat does not drop a quiet client that is still there.
    @Test func aPongCountsAsHearingThePeer() async throws {
        let clock = ManualClock(now: 1_000)
        let accepted = OpenedConnections()
        let server = try WebSocketServer(
            host: "127.0.0.1", port: 0, delegate: accepted, clock: clock,
            http: { $0.respond(HTTPResponse(status: 404, body: [])) })
        defer { server.stop() }
        let client = try WebSocketClient()
        defer { client.stop() }
        let clientSide = try client.connect(url: "ws://127.0.0.1:\(server.port)/v1/signal", delegate: OpenedConnections())
        let serverSide = try #require(await eventually { accepted.opened.withLock { $0.first } })

        clock.advance(by: 49_000)
        serverSide.ping()
        #expect(await eventually { serverSide.lastReceived == 50_000 ? true : nil } == true)

        let before = clientSide.lastReceived
        try await Task.sleep(for: .milliseconds(2))
        clientSide.ping()
        #expect(await eventually { clientSide.lastReceived > before ? true : nil } == true)
    }
}
