import CCrypto
import Foundation
import MajlisTestSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket server written by hand for one connection: it completes the handshake, sends
/// the bytes it was given as they are, closes its side and waits for the client to go.
final class RawWebSocketServer: Sendable {
    let port: Int
    let finished = Atomic<Bool>(false)

    init(sending frames: [[UInt8]]) throws {
        let (listener, port) = try LoopbackSocket.bind()
        guard listen(listener, 1) == 0 else {
            close(listener)
            throw LoopbackSocket.Failure(description: "could not listen for the raw WebSocket server")
        }
        self.port = port
        Thread.detachNewThread { [self] in
            defer { self.finished.store(true, ordering: .releasing) }
            let connection = accept(listener, nil, nil)
            close(listener)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var request: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
                let count = recv(connection, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                request += buffer.prefix(count)
            }
            let key = String(decoding: request, as: UTF8.self).split(separator: "\r\n")
                .first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                .map { $0.dropFirst("sec-websocket-key:".count).trimmingCharacters(in: .whitespaces) } ?? ""
            let answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(Self.acceptKey(key))\r\n\r\n"
            for bytes in [Array(answer.utf8)] + frames {
                var sent = 0
                while sent < bytes.count {
                    let count = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard count > 0 else { return }
                    sent += count
                }
            }
            // Closes its side, and reads until the client closes too (or 2 s pass).
            shutdown(connection, Int32(SHUT_WR))
            while recv(connection, &buffer, buffer.count, 0) > 0 {}
        }
    }

    /// The handshake's Sec-WebSocket-Accept for `key` (RFC 6455 section 4.2.2).
    static func acceptKey(_ key: String) -> String {
        let input = Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        var size: UInt32 = 0
        _ = EVP_Digest(input, input.count, &digest, &size, EVP_sha1(), nil)
        return Data(digest).base64EncodedString()
    }
}
