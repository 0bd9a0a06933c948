import Foundation

extension ServerContext {
    /// Whether an IP address is one of the cluster's other live nodes' (the host of its signaling
    /// or media address in its signed registry entry): the relay links it opens for its users
    /// are not held to one address's limit at the TCP level or before `hello` (each relayed
    /// session counts against its client's address from `hello` on).
    func isNodeAddress(_ address: String) -> Bool {
        registry?.lastKnown.contains { node in
            guard node.id != config.node else { return false }
            let signaling = URLComponents(string: node.signaling)?.host?.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            let media = node.media.lastIndex(of: ":").map { String(node.media[..<$0]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")) }
            return signaling == address || media == address
        } ?? false
    }

    /// The signaling addresses of the cluster's other live nodes (as the last report found
    /// them), whose pages may connect here and which this node's pages may connect to.
    var peerSignaling: [String] {
        registry?.lastKnown.filter { $0.id != config.node }.map(\.signaling) ?? []
    }
}
