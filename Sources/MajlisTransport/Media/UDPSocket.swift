import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 UDP socket. `receive` waits at most the receive timeout, so a loop can notice it
/// should stop. Thread rules: one thread receives; sends may come from any thread.
public final class UDPSocket: @unchecked Sendable {
    // Audited: `descriptor` is set once in init and closed once in `close` (guarded by `closed`).
    private let descriptor: Int32
    private let closed = NSLock()
    private var isClosed = false
    /// The bound address and port.
    public let host: String
    public let port: Int

    /// Binds to `host:port` (port 0 picks a free one).
    public init(host: String, port: Int, receiveTimeoutMilliseconds: Int = 200) throws(MediaError) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw MediaError.socket("socket() failed: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            Glibc.close(fd)
            throw MediaError.socket("\(host) is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw MediaError.socket("cannot bind UDP \(host):\(port): \(reason)")
        }
        var timeout = timeval(tv_sec: receiveTimeoutMilliseconds / 1000, tv_usec: (receiveTimeoutMilliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var size: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        descriptor = fd
        self.host = host
        self.port = Int(UInt16(bigEndian: actual.sin_port))
    }

    deinit { close() }

    /// Receives one datagram into `buffer`; returns its length and sender, or nil on timeout
    /// (at once when `wait` is false and nothing is queued).
    public func receive(into buffer: inout [UInt8], wait: Bool = true) -> (length: Int, from: UDPAddress)? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = buffer.withUnsafeMutableBytes { raw in
            withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(descriptor, raw.baseAddress, raw.count, wait ? 0 : Int32(MSG_DONTWAIT), $0, &length) }
            }
        }
        guard count >= 0 else { return nil }
        return (count, UDPAddress(address))
    }

    /// Waits up to `milliseconds` for a datagram to arrive; returns whether one is queued.
    public func waitReadable(milliseconds: Double) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, Int32(max(0, milliseconds).rounded(.up)))  // whole ms: at most 1 ms late
        return ready > 0 && entry.revents & Int16(POLLIN) != 0
    }

    /// Sends one datagram (best effort, as UDP is).
    public func send(_ bytes: [UInt8], to address: UDPAddress) {
        bytes.withUnsafeBytes { send($0, to: address) }
    }

    /// Sends `bytes` as one datagram without copying them.
    public func send(_ bytes: UnsafeRawBufferPointer, to address: UDPAddress) {
        var target = address.sockaddr
        _ = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// Runs `body` with the socket's descriptor (for system calls this type does not wrap).
    func withDescriptor<T>(_ body: (Int32) -> T) -> T { body(descriptor) }

    public func close() {
        closed.lock()
        defer { closed.unlock() }
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(descriptor)
    }
}
