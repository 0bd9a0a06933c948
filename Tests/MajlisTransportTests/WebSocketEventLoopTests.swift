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

    /// A message that is not UTF-8 closes a client's connection with 1007 and is not delivered,
    /// however long it is. (lws 4.1's own check corrupted the client's heap, and crashed the app,
    /// for a frame over about 10 KB.)
    @Test func aClientClosesOnAMessageThatIsNotUTF8WhateverItsLength() async throws {
        final class Closes: WebSocketDelegate, Sendable {
            let opened = Mutex<[WebSocketConnection]>([])
            let codes = Mutex<[UInt16?]>([])
            func webSocketDidOpen(_ connection: WebSocketConnection) { opened.withLock { $0.append(connection) } }
            func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) { codes.withLock { $0.append(code) } }
            func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {}
        }
        let server = Closes()
        let webSocketServer = try WebSocketServer(host: "127.0.0.1", port: 0, delegate: server, http: { $0.respond(HTTPResponse(status: 404, body: [])) })
        defer { webSocketServer.stop() }
        let client = try WebSocketClient()
        defer { client.stop() }
        for (index, length) in [100, 20_000, 60_000].enumerated() {
            let heard = HeardMessages()
            let connection = try client.connect(url: "ws://127.0.0.1:\(webSocketServer.port)/v1/signal", delegate: heard)
            let serverSide = try #require(await eventually { server.opened.withLock { $0.count > index ? $0[index] : nil } })
            var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
            bytes[length / 2] = 0xFF
            serverSide.send(Data(bytes))
            #expect(await eventually { server.codes.withLock { $0.count > index ? $0[index] : nil } } == 1007)
            #expect(connection.isClosed)
            #expect(heard.messages.withLock { $0.isEmpty })
        }
    }
}
