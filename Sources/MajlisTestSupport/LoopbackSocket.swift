import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket bound to 127.0.0.1 on a port the kernel chose.
public enum LoopbackSocket {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Binds a new TCP socket; returns it and its port. The caller closes it.
    public static func bind() throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard descriptor >= 0, bound else {
            if descriptor >= 0 { close(descriptor) }
            throw Failure(description: "could not bind a TCP socket on 127.0.0.1")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A TCP port on 127.0.0.1 that nothing holds now, for a server a test starts on its own port
    /// (and may stop and start again on it). Taken below the kernel's ephemeral range, so that no
    /// connection another test opens, and no socket bound to port 0, can take it while the server
    /// is starting or down: with a port the kernel chose, a parallel test's client sometimes got
    /// it in the seconds `initdb` takes, and PostgreSQL failed to start. Each port is handed out
    /// once per process; the starting point is random, so that processes rarely meet.
    public static func freePort() throws -> Int {
        for _ in 0..<Self.spare.count {
            let port = Self.spare.lowerBound + next.add(1, ordering: .relaxed).oldValue % Self.spare.count
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { break }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(descriptor)
            if bound { return port }
        }
        throw Failure(description: "no free TCP port on 127.0.0.1 in \(Self.spare)")
    }

    /// Ports the kernel does not give out by itself: from 10000 up to its ephemeral range
    /// (`/proc/sys/net/ipv4/ip_local_port_range`, 32768-60999 by default).
    static let spare: Range<Int> = {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let low = range.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) } ?? 32768
        return 10000..<max(low, 20000)
    }()

    private static let next = Atomic<Int>(Int.random(in: 0..<1_000_000))
}
