import MajlisTransport

/// How the nodes of one cluster know each other in Redis: each signs what it leaves there (its
/// registry entry) with a secret only they share, and reads nothing unsigned. Whoever else can
/// write to Redis (a stray client, an attacker on its network) cannot add a node that clients are
/// sent to, rooms are placed on, or users' tokens are relayed to.
///
/// The secret is `cluster-secret` where it is configured (so signing keys can be rotated node by
/// node), else derived from the signing keys (`--keys`), which every node of a cluster shares:
/// whoever holds them can mint any token already, so they guard the cluster no less.
public struct ClusterSeal: Sendable {
    private let key: [UInt8]

    public init(secret: String) {
        key = HMACSHA256.mac(key: Array("majlis cluster seal".utf8), message: Array(secret.utf8))
    }

    /// The seal of a cluster configured with these signing keys and no cluster secret.
    public static func derived(from keys: [String: String]) -> ClusterSeal {
        ClusterSeal(secret: keys.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: "\n"))
    }

    /// `text` signed: its MAC in hex, a space, then the text.
    public func seal(_ text: String) -> String {
        Self.hex(HMACSHA256.mac(key: key, message: Array(text.utf8))) + " " + text
    }

    /// The text of what `seal` made with this cluster's secret; nil for anything else.
    public func open(_ sealed: String) -> String? {
        let bytes = Array(sealed.utf8)
        guard bytes.count > 65, bytes[64] == UInt8(ascii: " ") else { return nil }
        let text = String(decoding: bytes[65...], as: UTF8.self)
        let mac = Self.hex(HMACSHA256.mac(key: key, message: Array(bytes[65...])))
        guard HMACSHA256.equal(Array(mac.utf8), Array(bytes[..<64])) else { return nil }
        return text
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
