import Foundation

/// What a node of a cluster says, signed, when it opens a session on another node to relay a
/// client's ops there (`hello`'s `relay`): which node it is, the address the client connected to
/// it from, and when. The room's node counts the session against that address, not the relaying
/// node's (whose one address carries every relayed user), and believes the statement only when
/// the cluster's seal is right, the node is the `via` the hello names, and it is recent.
struct RelayStatement: Codable, Equatable {
    var node: String
    var client: String
    /// Unix milliseconds when the relaying node made it.
    var at: Int64

    /// How far apart the two nodes' clocks and the link's opening may put `at` from the reader's
    /// now: a statement copied off the wire stops being believed after this.
    static let freshness: Int64 = 60_000

    /// The statement signed with the cluster's seal: `hello`'s `relay`.
    func sealed(with seal: ClusterSeal) -> String {
        seal.seal(String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self))
    }

    /// The client's address `sealed` states for node `via`, or nil when it is not this cluster's
    /// statement, names another node, or is older (or newer) than `freshness`.
    static func client(in sealed: String, seal: ClusterSeal, via: String, now: Int64) -> String? {
        guard let text = seal.open(sealed), let statement = try? JSONDecoder().decode(Self.self, from: Data(text.utf8)),
            statement.node == via, abs(now - statement.at) <= freshness, !statement.client.isEmpty
        else { return nil }
        return statement.client
    }
}
