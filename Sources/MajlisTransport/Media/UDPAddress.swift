#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 address and port.
public struct UDPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in network byte order, as the socket API holds it.
    public var address: UInt32
    public var port: UInt16

    public init(_ raw: sockaddr_in) {
        address = raw.sin_addr.s_addr
        port = UInt16(bigEndian: raw.sin_port)
    }

    /// "a.b.c.d" and a port; nil if the text is not an IPv4 address.
    public init?(host: String, port: Int) {
        var parsed = in_addr()
        guard inet_pton(AF_INET, host, &parsed) == 1, (0...65535).contains(port) else { return nil }
        address = parsed.s_addr
        self.port = UInt16(port)
    }

    var sockaddr: sockaddr_in {
        var raw = sockaddr_in()
        raw.sin_family = sa_family_t(AF_INET)
        raw.sin_port = in_port_t(port.bigEndian)
        raw.sin_addr.s_addr = address
        return raw
    }

    /// The four octets.
    public var octets: (UInt8, UInt8, UInt8, UInt8) {
        let value = UInt32(bigEndian: address)
        return (UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF))
    }

    public var description: String {
        let (a, b, c, d) = octets
        return "\(a).\(b).\(c).\(d):\(port)"
    }
}
