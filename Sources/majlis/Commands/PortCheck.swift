import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Tells before start-up whether an address can be listened on, so a busy port gets a clear
/// message (and nothing is created on disk) instead of a library's log line.
enum PortCheck {
    enum Kind {
        case tcp, udp
    }

    /// nil when `host:port` can be bound now; otherwise why not.
    static func problem(host: String, port: Int, kind: Kind) -> String? {
        guard port != 0 else { return nil }
        var hints = addrinfo()
        hints.ai_socktype = Int32(kind == .tcp ? SOCK_STREAM.rawValue : SOCK_DGRAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let info = found else { return "cannot resolve \(host)" }
        defer { freeaddrinfo(found) }
        let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            return errno == EADDRINUSE ? "in use" : String(cString: strerror(errno))
        }
        if kind == .tcp && listen(fd, 1) != 0 { return errno == EADDRINUSE ? "in use" : String(cString: strerror(errno)) }
        return nil
    }
}
