import Foundation
import MajlisProtocol

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MajlisKit
import MajlisPacks
import MajlisServer
import MajlisTestSupport
import Testing

/// Resource packs on the device: fetched once, checked, unpacked into a folder named by their
/// hash and played from there; damaged bytes never kept; the least recently used evicted.
@Suite struct PackCacheTests {
    static func directory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("majlis-packs-\(UUID().uuidString)").path
    }

    /// The classic pack with `marker` in its laugh animation, its bytes and its name.
    static func version(_ marker: UInt8, big: Int = 0) throws -> (bytes: Data, sha: String) {
        var files = PackArchives.files()
        files[1].1[0] = marker
        if big > 0 { files[2].1 = Array(randomBytes(big)) }
        let bytes = try PackArchives.zip(files, deflated: big == 0)
        return (Data(bytes), ResourcePack.sha256(bytes))
    }

    @Test func aPackIsFetchedOnceAndPlayedFromItsFolder() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = MemoryPackSource()
        let first = try Self.version(1)
        source.publish(catalogue: Data(#"{"version":"v1","packs":[]}"#.utf8), packs: [first.sha: first.bytes])
        let cache = PackCache(directory: directory, source: source)
        #expect(!(await cache.isCached(first.sha)))
        let laugh = try await cache.path(of: "laugh.webp", in: first.sha)
        #expect(laugh == directory + "/" + first.sha + "/laugh.webp")
        #expect(FileManager.default.contents(atPath: laugh).map(Array.init) == [1] + Array(repeating: 0x57, count: 39_999))
        #expect(FileManager.default.contents(atPath: try await cache.path(of: "clap/2.png", in: first.sha)) == Data(repeating: 2, count: 300))
        #expect(try await cache.manifest(of: first.sha).items.map(\.id) == ["laugh", "clap", "heart"])
        // Played again, and by the app started again: no request.
        _ = try await cache.path(of: "heart.json", in: first.sha)
        let again = PackCache(directory: directory, source: source)
        _ = try await again.path(of: "laugh.webp", in: first.sha)
        #expect(source.fetched == [first.sha])
        // Many plays at once: one fetch.
        let second = try Self.version(2)
        source.publish(catalogue: Data(#"{"version":"v2","packs":[]}"#.utf8), packs: [second.sha: second.bytes])
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await cache.folder(of: second.sha) } }
            for try await folder in group { #expect(folder.hasSuffix(second.sha)) }
        }
        #expect(source.fetched == [first.sha, second.sha], "a changed pack is another name, fetched once")
        await #expect(throws: MajlisError.self) { try await cache.path(of: "../escape", in: first.sha) }
        await #expect(throws: MajlisError.self) { try await cache.path(of: "missing.webp", in: first.sha) }
    }

    @Test func aDamagedDownloadIsNeverKeptAndIsFetchedAgain() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = MemoryPackSource()
        let pack = try Self.version(3)
        source.publish(catalogue: Data(#"{"version":"v","packs":[]}"#.utf8), packs: [pack.sha: pack.bytes])
        source.damageNextFetch(of: pack.sha)
        let cache = PackCache(directory: directory, source: source)
        do {
            _ = try await cache.folder(of: pack.sha)
            Issue.record("a damaged pack was taken")
        } catch {
            #expect("\(error)".contains("came damaged"), "\(error)")
        }
        #expect(!(await cache.isCached(pack.sha)))
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).isEmpty, "nothing of it is kept")
        _ = try await cache.folder(of: pack.sha)
        let cached = await cache.isCached(pack.sha)
        #expect(source.fetched == [pack.sha, pack.sha] && cached)
    }

    @Test func theLeastRecentlyUsedPacksGoPastTheCachesSize() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = MemoryPackSource()
        let packs = try (0..<3).map { try Self.version(UInt8(10 + $0), big: 400_000) }
        source.publish(catalogue: Data(#"{"version":"v","packs":[]}"#.utf8), packs: Dictionary(uniqueKeysWithValues: packs.map { ($0.sha, $0.bytes) }))
        let cache = PackCache(directory: directory, maxBytes: 1_000_000, source: source)
        _ = try await cache.folder(of: packs[0].sha)
        _ = try await cache.folder(of: packs[1].sha)
        // The first used again: the second is now the least recent, and goes for the third.
        try await Task.sleep(for: .milliseconds(20))
        _ = try await cache.folder(of: packs[0].sha)
        _ = try await cache.folder(of: packs[2].sha)
        let kept = [await cache.isCached(packs[0].sha), await cache.isCached(packs[1].sha), await cache.isCached(packs[2].sha)]
        #expect(kept == [true, false, true])
    }

    /// Against the real server: the catalogue names the pack the operator uploaded, and the
    /// cache fetches it by name from there.
    @Test func packsComeFromTheServersCatalogue() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pack = try Self.version(5)
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.server.port)/v1/packs")!)
        request.httpMethod = "POST"
        request.httpBody = pack.bytes
        request.setValue("Bearer \(server.token("backend", grants: Grants(join: false, admin: true, publish: false, chat: false)))", forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 201)
        let url = server.url
        let cache = PackCache(directory: directory, source: HTTPPackSource(server: { url }))
        let catalogue = try await cache.catalogue()
        let listed = try #require(catalogue.emojiPack(with: "clap"))
        #expect(listed.sha256 == pack.sha && listed.id == "classic" && catalogue.emojiPack(with: "dance") == nil)
        let frames = try #require(listed.items.first { $0.id == "clap" }?.frames)
        for frame in frames { #expect(FileManager.default.fileExists(atPath: try await cache.path(of: frame, in: listed.sha256))) }
    }
}
