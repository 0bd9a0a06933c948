#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts a server's open TCP connections by peer address, HTTP and WebSocket alike, so that one
/// address cannot hold more than `limit` of them (slow request bodies held open by the
/// hundred would otherwise use up the process's descriptors).
///
/// It asks the kernel rather than following libwebsockets' connection lifecycle: each accepted
/// descriptor is remembered with its socket's inode, and an entry whose descriptor is closed,
/// or reused by another socket, no longer counts. Service thread only.
struct ConnectionLimiter {
    let limit: Int
    private var byDescriptor: [Int32: (address: String, inode: UInt64)] = [:]
    private var byAddress: [String: Set<Int32>] = [:]

    /// Addresses never limited (the other nodes of a cluster, whose one address carries the
    /// sessions they relay for all their users).
    let exempt: @Sendable (String) -> Bool

    init(limit: Int, exempt: @escaping @Sendable (String) -> Bool = { _ in false }) {
        self.limit = limit
        self.exempt = exempt
    }

    /// Whether the connection just accepted on `descriptor` may stay; counted when it may.
    mutating func admit(_ descriptor: Int32) -> Bool {
        guard let inode = Self.inode(descriptor) else { return true }
        forget(descriptor)
        guard let address = Self.peerAddress(descriptor), !exempt(address) else { return true }
        var open = byAddress[address] ?? []
        if open.count >= limit {
            // Some may have closed since: count only those still open as the same socket.
            for other in open where Self.inode(other) != byDescriptor[other]?.inode {
                open.remove(other)
                byDescriptor[other] = nil
            }
        }
        guard open.count < limit else {
            byAddress[address] = open
            return false
        }
        open.insert(descriptor)
        byAddress[address] = open
        byDescriptor[descriptor] = (address, inode)
        return true
    }

    /// Open connections from `address` that are counted (some may have closed unnoticed).
    func counted(_ address: String) -> Int { byAddress[address]?.count ?? 0 }

    private mutating func forget(_ descriptor: Int32) {
        guard let old = byDescriptor.removeValue(forKey: descriptor) else { return }
        byAddress[old.address]?.remove(descriptor)
        if byAddress[old.address]?.isEmpty == true { byAddress[old.address] = nil }
    }

    private static func inode(_ descriptor: Int32) -> UInt64? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }

    /// The peer's IP address (without the port), IPv4 or IPv6.
    private static func peerAddress(_ descriptor: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        guard got == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            var address = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr } }
            guard inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil else { return nil }
        case AF_INET6:
            var address = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr } }
            guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else { return nil }
        default:
            return nil
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
