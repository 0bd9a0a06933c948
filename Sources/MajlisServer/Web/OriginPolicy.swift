/// Which browsers' pages may talk to this server, and on which names it answers.
///
/// - A WebSocket upgrade that carries `Origin` (every browser's does) is taken only from the
///   server's own origin (the scheme's host and port equal to the request's `Host`) or one of
///   `allowed` (`majlis serve --allow-origin`), or, on a node of a cluster, the page of another
///   live node (`peers`: their signaling addresses): a page whose node died goes on at another
///   node without leaving the page. Clients that are not browsers send none.
/// - In development mode the server answers only requests whose `Host` is a loopback name or an
///   IP address: a page on a foreign name that resolves to 127.0.0.1 (DNS rebinding) gets
///   nothing, so it cannot fetch a development token.
struct OriginPolicy: Sendable {
    /// Origins let in besides the server's own, as `scheme://host[:port]`, lower-case.
    let allowed: Set<String>
    let developmentMode: Bool
    /// The signaling addresses of the cluster's live nodes (none for a lone server).
    let peers: @Sendable () -> [String]

    init(allowed: [String], developmentMode: Bool, peers: @escaping @Sendable () -> [String] = { [] }) {
        self.allowed = Set(allowed.map { Self.normalized($0) })
        self.developmentMode = developmentMode
        self.peers = peers
    }

    /// Whether a WebSocket upgrade with these headers is taken.
    func acceptsUpgrade(origin: String?, host: String?) -> Bool {
        guard answers(host: host) else { return false }
        guard let origin, !origin.isEmpty else { return true }
        let normalized = Self.normalized(origin)
        if allowed.contains(normalized) || allowed.contains("*") { return true }
        guard let host, let scheme = normalized.range(of: "://") else { return false }
        if normalized[scheme.upperBound...] == host.lowercased() { return true }
        return peers().contains { Self.pageOrigin(ofSignaling: $0) == normalized }
    }

    /// The origin of the page a node serves beside its signaling address
    /// (`wss://node1.example.com/v1/signal` → `https://node1.example.com`), lower-case.
    static func pageOrigin(ofSignaling address: String) -> String? {
        guard let source = connectSource(ofSignaling: address) else { return nil }
        return (source.hasPrefix("wss:") ? "https" : "http") + source.drop { $0 != ":" }
    }

    /// A signaling address as a page's Content-Security-Policy names it (`ws://host:port`),
    /// lower-case; nil when it is not a ws or wss URL.
    static func connectSource(ofSignaling address: String) -> String? {
        let lower = address.lowercased()
        guard lower.hasPrefix("ws://") || lower.hasPrefix("wss://") else { return nil }
        let scheme = lower.hasPrefix("wss://") ? "wss://" : "ws://"
        let authority = lower.dropFirst(scheme.count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, authority.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:[]".contains($0)) }) else { return nil }
        return scheme + authority
    }

    /// Whether a request with this `Host` is answered.
    func answers(host: String?) -> Bool {
        guard developmentMode else { return true }
        guard let host else { return true }  // HTTP/1.0 without Host: not a browser's
        return Self.isLoopbackOrAddress(Self.hostName(host))
    }

    /// The name in a `Host` value, without its port (an IPv6 literal keeps its brackets).
    static func hostName(_ host: String) -> String {
        let lower = host.lowercased()
        if lower.hasPrefix("["), let close = lower.firstIndex(of: "]") { return String(lower[...close]) }
        return String(lower.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    /// `localhost` (or a name under it), or an IPv4 or bracketed IPv6 literal.
    static func isLoopbackOrAddress(_ name: String) -> Bool {
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        if name.hasPrefix("[") && name.hasSuffix("]") { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && UInt8(part) != nil }
    }

    static func normalized(_ origin: String) -> String {
        var text = origin.lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
