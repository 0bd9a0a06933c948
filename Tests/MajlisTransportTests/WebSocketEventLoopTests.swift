import Foundation
import MajlisTransport
import Synchronization
import Testing

/// Keeps the messages a connection hears.
final class HeardMessages: WebSocketDelegate, Sendable {
    let messages = Mutex<[Data]>([])

    func webSocketDidOpen(_ connection: WebSocketConnection) {}
    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {}
    func webSocket(_ connection: WebSocketConnection, didReceive message: Data) { messages.withLock { $0.append(message) } }
}

@Suite struct WebSocketEventLoopTests {
    /// On Linux a server and a client wait on an epoll loop of their own: with libwebsockets' poll()
    /// loop every wake-up (each request, each answer to write) scanned all of a server's sockets,
    /// about a millisecond at 2,000 members. Messages flow on it as before.
    @Test func serversAndClientsWaitOnEpoll() async throws {
        let accepted = OpenedConnections()
        let server = try WebSocketServer(host: "127.0.0.1", port: 0, delegate: accepted, http: { $0.respond(HTTPResponse(status: 404, body: [])) })
        defer { server.stop() }
        let client = try WebSocketClient()
        defer { client.stop() }
        #if os(Linux)
        #expect(server.waitsOnEpoll)
        #expect(client.waitsOnEpoll)
        #endif
        let heard = HeardMessages()
        let clientSide = try client.connect(url: "ws://127.0.0.1:\(server.port)/v1/signal", delegate: heard)
        let serverSide = try #require(await eventually { accepted.opened.withLock { $0.first } })
        serverSide.send(Data("hello".utf8))
        #expect(await eventually { heard.messages.withLock { $0.first } } == Data("hello".utf8))
        clientSide.close(code: 1000, reason: "done")
    }
}
