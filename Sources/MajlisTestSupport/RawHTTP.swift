import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// HTTP spoken byte by byte over a TCP connection to 127.0.0.1, for requests no HTTP client
/// library would send (two Content-Length headers, bodies that trickle, foreign `Host` names).
public final class RawHTTP {
    public let descriptor: Int32

    /// Connects to 127.0.0.1:`port`; reads wait at most `timeout` seconds.
    public init(port: Int, timeout: Double = 30) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw LoopbackSocket.Failure(description: "no socket") }
        var wait = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw LoopbackSocket.Failure(description: "could not connect to 127.0.0.1:\(port)")
        }
    }

    deinit { close(descriptor) }

    /// Sends `text`; false once the server has closed or reset the connection.
    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    /// Everything the server sends until it closes the connection (or the read times out, or
    /// the connection is reset), as text.
    public func readAll() -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Sends `request` on a new connection and returns all that comes back before it closes.
    public static func exchange(port: Int, _ request: String, timeout: Double = 30) throws -> String {
        let connection = try RawHTTP(port: port, timeout: timeout)
        connection.send(request)
        return connection.readAll()
    }

    /// The status codes of the answers in `response`, in order.
    public static func statuses(_ response: String) -> [Int] {
        response.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
    }
}
