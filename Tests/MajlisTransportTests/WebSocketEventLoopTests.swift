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

    /// A server writes what is queued for a connection in one go, framing each message itself:
    /// every length form of RFC 6455 (7-bit, 16-bit and 64-bit) arrives whole, in order, and as
    /// the text it was, at a client that checks frames (libwebsockets'), whether the messages
    /// share a write or span several (more than 64 KiB queued).
    @Test func queuedMessagesArriveWholeAndInOrderWhateverTheirLength() async throws {
        let lengths = [0, 1, 125, 126, 127, 1_000, 65_535, 65_536, 70_000, 3, 2, 1] + Array(repeating: 40, count: 50)
        let messages = lengths.enumerated().map { index, length in
            Data((0..<length).map { UInt8(ascii: "a") + UInt8(($0 + index) % 26) })
        }
        /// Answers "go" with every message, queued from the service thread's own callback, so
        /// that all are waiting when the loop next writes.
        final class Sender: WebSocketDelegate, Sendable {
            let messages: [Data]
            init(messages: [Data]) { self.messages = messages }
            func webSocketDidOpen(_ connection: WebSocketConnection) {}
            func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {}
            func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {
                for reply in messages { connection.send(reply, urgent: false) }
            }
        }
        let server = try WebSocketServer(
            host: "127.0.0.1", port: 0, delegate: Sender(messages: messages), http: { $0.respond(HTTPResponse(status: 404, body: [])) })
        defer { server.stop() }
        let client = try WebSocketClient()
        defer { client.stop() }
        let heard = HeardMessages()
        let connection = try client.connect(url: "ws://127.0.0.1:\(server.port)/v1/signal", delegate: heard)
        connection.send(Data("go".utf8))
        #expect(await eventually { heard.messages.withLock { $0.count >= messages.count ? true : nil } } == true)
        let received = heard.messages.withLock { $0 }
        #expect(received.map(\.count) == lengths)
        #expect(received == messages)
        #expect(!connection.isClosed)
        connection.close(code: 1000, reason: "done")
    }
}
