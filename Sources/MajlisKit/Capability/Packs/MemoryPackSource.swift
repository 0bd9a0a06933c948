import Foundation
import MajlisProtocol
import Synchronization

/// A `PackSource` in memory: packs published to it, what each call asked (to count that a pack
/// is fetched once), and a way to hand out damaged bytes, as a network or a cache in between may.
public final class MemoryPackSource: PackSource {
    private struct State {
        var catalogue = Data(#"{"version":"","packs":[]}"#.utf8)
        var packs: [String: Data] = [:]
        var damaged: Set<String> = []
        var fetched: [String] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Makes `catalogue` (the server's JSON) the catalogue, and keeps `packs` by name.
    public func publish(catalogue: Data, packs: [String: Data]) {
        state.withLock { state in
            state.catalogue = catalogue
            state.packs.merge(packs) { _, new in new }
        }
    }

    /// The next fetch of `sha256` hands out its bytes with one changed.
    public func damageNextFetch(of sha256: String) {
        _ = state.withLock { $0.damaged.insert(sha256) }
    }

    /// The packs fetched so far, in order.
    public var fetched: [String] { state.withLock { $0.fetched } }

    public func catalogue() async throws(MajlisError) -> Data {
        state.withLock { $0.catalogue }
    }

    public func pack(_ sha256: String) async throws(MajlisError) -> Data {
        let found: Data? = state.withLock { state in
            state.fetched.append(sha256)
            guard var bytes = state.packs[sha256] else { return nil }
            if state.damaged.remove(sha256) != nil, !bytes.isEmpty { bytes[bytes.startIndex + bytes.count / 2] ^= 0xFF }
            return bytes
        }
        guard let found else { throw MajlisError.server(ProtocolError(.badRequest, "no pack \(sha256)")) }
        return found
    }
}
