import Foundation
import MajlisPacks
import MajlisServer
import MajlisTestSupport
import Testing

/// Resource packs in the store, the same on SQLite and PostgreSQL: one current version a pack,
/// older ones served for a while, then pruned.
@Suite struct PackStoreTests {
    /// The classic pack, with `marker` in one of its files (another marker: another version).
    static func version(_ marker: UInt8) throws -> (pack: ResourcePack, bytes: [UInt8]) {
        var files = PackArchives.files()
        files[1].1[0] = marker
        let bytes = try PackArchives.zip(files)
        return (try ResourcePack(archive: bytes), bytes)
    }

    @Test(arguments: StoreBackend.allCases) func theLastUploadIsCurrentAndOldVersionsAreServedUntilPruned(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        let first = try Self.version(1)
        let second = try Self.version(2)
        #expect(try store.packCatalogue().isEmpty)
        #expect(try store.addPack(first.pack, bytes: first.bytes, now: 10))
        #expect(!(try store.addPack(first.pack, bytes: first.bytes, now: 11)))
        #expect(try store.packCatalogue() == [Store.StoredPack(sha256: first.pack.sha256, manifest: first.pack.manifest, size: first.bytes.count, createdAt: 10)])
        #expect(try store.packSize(first.pack.sha256) == first.bytes.count)
        #expect(try store.packBytes(first.pack.sha256, in: 0..<first.bytes.count) == first.bytes)
        #expect(try store.packBytes(first.pack.sha256, in: 5..<105) == Array(first.bytes[5..<105]))

        #expect(try store.addPack(second.pack, bytes: second.bytes, now: 20))
        #expect(try store.packCatalogue().map(\.sha256) == [second.pack.sha256])
        #expect(try store.packBytes(first.pack.sha256, in: 0..<first.bytes.count) == first.bytes, "an older version is still served")
        // The older one uploaded again is current again.
        #expect(!(try store.addPack(first.pack, bytes: first.bytes, now: 30)))
        #expect(try store.packCatalogue().map(\.sha256) == [first.pack.sha256])

        #expect(try store.retirePack("classic", now: 40))
        #expect(!(try store.retirePack("classic", now: 41)))
        #expect(try store.packCatalogue().isEmpty)
        #expect(try store.packSize(second.pack.sha256) == second.bytes.count)
        #expect(try store.prunePacks(replacedBefore: 35) == 1)
        #expect(try store.packSize(second.pack.sha256) == nil && store.packSize(first.pack.sha256) != nil)
        #expect(try store.prunePacks(replacedBefore: 50) == 1)
        #expect(try store.packSize(first.pack.sha256) == nil)
    }
}
