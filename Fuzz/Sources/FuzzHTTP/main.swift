import Foundation
import FuzzDriver
import MajlisTransport

#if canImport(Glibc)
import Glibc
#endif

/// Any bytes as what a client sends the server's HTTP port: libwebsockets' request parser and
/// Majlis's handling behind it (headers, Content-Length, bodies, refusals, WebSocket upgrades)
/// on a real server on loopback. The server must survive every input and, after each, still
/// answer a plain request. With MAJLIS_FUZZ_SLOW_MS set, an input whose connection the server
/// has not finished with in that time, in the least of three tries, is a finding.
let slowLimit = ProcessInfo.processInfo.environment["MAJLIS_FUZZ_SLOW_MS"].flatMap(Double.init)

let server = try! WebSocketServer(
    host: "127.0.0.1", port: 0, delegate: nil,
    limits: WebSocketServer.Limits(connectionsPerAddress: 64, requestSeconds: 2, refuseBody: { request in
        request.headers["authorization"] == nil ? HTTPResponse(status: 401, body: Array(#"{"error":"unauthorized"}"#.utf8)) : nil
    }),
    http: { exchange in
        exchange.respond(HTTPResponse(status: 200, body: Array("\(exchange.request.method) \(exchange.request.path) \(exchange.request.body.count)".utf8)))
    })

/// Sends `bytes` on a new connection, closes the sending side, and reads until the server
/// closes (at most 5 s); what came back.
func exchange(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    precondition(descriptor >= 0)
    defer { close(descriptor) }
    var wait = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(server.port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    precondition(connected == 0, "the server no longer accepts connections")
    if let base = bytes.baseAddress, !bytes.isEmpty { _ = send(descriptor, base, bytes.count, Int32(MSG_NOSIGNAL)) }
    shutdown(descriptor, Int32(SHUT_WR))
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = recv(descriptor, &buffer, buffer.count, 0)
        if count <= 0 { break }
        received += buffer[0..<count]
    }
    return received
}

nonisolated(unsafe) var inputs = 0  // libFuzzer calls in from one thread

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzHTTP(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    func timedExchange() -> Double {
        let started = DispatchTime.now().uptimeNanoseconds
        _ = exchange(UnsafeBufferPointer(start: bytes, count: count))
        return Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
    }
    let spent = timedExchange()
    if let slowLimit, spent > slowLimit {
        let least = min(spent, timedExchange(), timedExchange())
        precondition(least <= slowLimit, "a slow input: \(least) ms for \(count) bytes")
    }
    inputs += 1
    if inputs % 500 == 0 {
        let plain = Array("GET /alive HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        let answer = plain.withUnsafeBufferPointer { exchange($0) }
        precondition(String(decoding: answer, as: UTF8.self).contains("GET /alive 0"), "the server stopped answering")
    }
    return 0
}

runFuzzer(fuzzHTTP)
