import Foundation
import MajlisTestSupport
import MajlisTransport
import Synchronization
import Testing

/// What a client hears on one connection: whether it opened, how it closed, its messages.
final class ConnectionRecord: WebSocketDelegate, Sendable {
    let opened = Atomic<Bool>(false)
    let closed = Atomic<Bool>(false)
    let messages = Mutex<[Data]>([])

    func webSocketDidOpen(_ connection: WebSocketConnection) { opened.store(true, ordering: .releasing) }
    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) { closed.store(true, ordering: .releasing) }
    func webSocket(_ connection: WebSocketConnection, didReceive message: Data) { messages.withLock { $0.append(message) } }
}

/// Over `wss` a client talks only to a server whose certificate it trusts: one the system's
/// certificate authorities vouch for, or the one it was given. A server in the middle with a
/// certificate of its own gets nothing (not the token a client's first message carries).
@Suite struct TLSTests {
    /// Answers every message with the same message three times.
    final class Echo: WebSocketDelegate, Sendable {
        let heard = Mutex<[Data]>([])
        func webSocketDidOpen(_ connection: WebSocketConnection) {}
        func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {}
        func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {
            heard.withLock { $0.append(message) }
            for _ in 0..<3 { connection.send(message, urgent: false) }
        }
    }

    @Test func aClientTalksOnlyToAServerWhoseCertificateItTrusts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let own = try SelfSignedCertificate(in: directory, name: "server")
        let other = try SelfSignedCertificate(in: directory, name: "other")
        let echo = Echo()
        let server = try WebSocketServer(
            host: "127.0.0.1", port: 0, tls: (own.certificate, own.key), delegate: echo, http: { $0.respond(HTTPResponse(status: 404, body: [])) })
        defer { server.stop() }
        let client = try WebSocketClient()
        defer { client.stop() }
        let url = "wss://127.0.0.1:\(server.port)/v1/signal"

        // No authority vouches for it, and another certificate is not it: refused, before a word.
        // (On a loaded machine a handshake can stall until the client's connect timeout, with no
        // certificate seen yet: that attempt proves nothing about the certificate, so it is made
        // again, up to three times; none of them may open.)
        for trusting in [nil, other.certificate] {
            var reason: String?
            for _ in 0..<3 where reason == nil {
                let record = ConnectionRecord()
                let connection = try client.connect(url: url, delegate: record, trusting: trusting)
                connection.send(Data(#"{"token":"secret"}"#.utf8))
                #expect(await eventually { record.closed.load(ordering: .acquiring) ? true : nil } == true, "trusting \(trusting ?? "the system")")
                let opened = record.opened.load(ordering: .acquiring)
                #expect(!opened)
                reason = connection.rejectedCertificate
            }
            #expect(reason?.contains("self-signed") == true, "\(reason ?? "no reason")")
        }
        #expect(echo.heard.withLock { $0.isEmpty })

        // Its own certificate trusted: messages flow both ways.
        let record = ConnectionRecord()
        let connection = try client.connect(url: url, delegate: record, trusting: own.certificate)
        connection.send(Data("hello".utf8))
        #expect(await eventually { record.messages.withLock { $0.count == 3 ? true : nil } } == true)
        #expect(record.messages.withLock { $0 } == Array(repeating: Data("hello".utf8), count: 3))
        let opened = record.opened.load(ordering: .acquiring)
        #expect(opened)
        connection.close(code: 1000, reason: "done")

        #expect(throws: (any Error).self) { try client.connect(url: url, delegate: ConnectionRecord(), trusting: directory.appendingPathComponent("none.pem").path) }
    }
}
