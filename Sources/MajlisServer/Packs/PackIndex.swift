import MajlisPacks
import Synchronization

/// The items of every pack the store keeps (current or not yet pruned), in memory, for the
/// room ops that name one (`seat.emoji`), checked on the service thread without the store. It is
/// read again from the store every five seconds (a pack another node of the cluster took is known
/// here within that) and at once when this node takes one. A pack's items never change (its name
/// is its content's hash), so only packs new to it are read whole.
final class PackIndex: Sendable {
    private struct Known {
        var kind: PackKind
        var items: Set<String>
    }

    private let packs = Mutex<[String: Known]>([:])

    /// Whether `pack` is kept, of `kind`, and has `item`.
    func has(_ pack: String, item: String, kind: PackKind) -> Bool {
        packs.withLock { $0[pack].map { $0.kind == kind && $0.items.contains(item) } ?? false }
    }

    /// Reads what the store keeps now: packs new to the index, and which are gone.
    func reload(from store: Store) throws {
        let kept = Set(try store.keptPacks())
        let known = packs.withLock { Set($0.keys) }
        var added: [String: Known] = [:]
        for sha in kept.subtracting(known) {
            guard let manifest = try store.packManifest(sha) else { continue }
            added[sha] = Known(kind: manifest.kind, items: Set(manifest.items.map(\.id)))
        }
        packs.withLock { packs in
            for sha in known.subtracting(kept) { packs[sha] = nil }
            packs.merge(added) { _, new in new }
        }
    }
}
