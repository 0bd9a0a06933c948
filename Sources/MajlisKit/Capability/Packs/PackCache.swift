import Foundation
import MajlisPacks
import MajlisProtocol

/// Resource packs on the device (docs/protocol.md section 19). A pack is fetched once, checked
/// (its bytes hash to its name, and its archive and manifest keep every rule the server keeps),
/// unpacked into a folder named by its SHA-256, and played from there from then on: a pack whose
/// content changed has another name and is fetched anew, and nothing is ever played from bytes
/// that failed their check (what failed is not kept, and the next use fetches again). The packs
/// used least recently go when the folder holds more than `maxBytes`. One fetch of a pack at a
/// time, however many plays ask for it.
public actor PackCache {
    public let directory: String
    public let maxBytes: Int
    private let source: any PackSource
    private var fetches: [String: Task<Void, any Error>] = [:]
    /// The file in each pack's folder, written last, that says the folder is whole.
    static let marker = ".majlis-pack"

    /// `directory`: where packs are kept (made if need be); `maxBytes`: how much they may take
    /// (256 MiB unless said); `source`: where they come from (`HTTPPackSource`).
    public init(directory: String, maxBytes: Int = 256 << 20, source: any PackSource) {
        self.directory = directory
        self.maxBytes = maxBytes
        self.source = source
    }

    /// The server's catalogue now.
    public func catalogue() async throws(MajlisError) -> PackCatalogue {
        try await PackCatalogue.fetch(from: source)
    }

    /// Whether pack `sha256` is on the device, whole (no fetch).
    public func isCached(_ sha256: String) -> Bool {
        FileManager.default.fileExists(atPath: folderPath(sha256) + "/" + Self.marker)
    }

    /// The folder holding pack `sha256`'s files, unpacked: from the device, or fetched, checked
    /// and unpacked first. `.invalidResponse` when what came is not that pack (nothing is kept).
    public func folder(of sha256: String) async throws(MajlisError) -> String {
        guard ResourcePack.isName(sha256) else { throw MajlisError.misuse("\(sha256) is not a pack's name (its SHA-256, 64 lowercase hex digits)") }
        if !isCached(sha256) {
            let fetch = fetches[sha256] ?? Task { try await self.fetch(sha256) }
            fetches[sha256] = fetch
            let result = await fetch.result
            fetches[sha256] = nil
            if case .failure(let error) = result { throw (error as? MajlisError) ?? .invalidResponse("\(error)") }
        }
        let path = folderPath(sha256)
        try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: path)
        return path
    }

    /// The path of `file` (as the manifest names it) in pack `sha256`, the pack fetched first if
    /// need be.
    public func path(of file: String, in sha256: String) async throws(MajlisError) -> String {
        do { try ZipArchive.check(file) } catch { throw MajlisError.misuse(error.reason) }
        let path = try await folder(of: sha256) + "/" + file
        guard FileManager.default.fileExists(atPath: path) else { throw MajlisError.misuse("pack \(sha256) has no \(file)") }
        return path
    }

    /// The manifest of a cached pack.
    public func manifest(of sha256: String) async throws(MajlisError) -> PackManifest {
        let marker = try await folder(of: sha256) + "/" + Self.marker
        guard let data = FileManager.default.contents(atPath: marker), let manifest = try? JSONDecoder().decode(PackManifest.self, from: data) else {
            throw MajlisError.invalidResponse("pack \(sha256)'s manifest could not be read back")
        }
        return manifest
    }

    // MARK: Fetching

    private func folderPath(_ sha256: String) -> String { directory + "/" + sha256 }

    /// Fetches, checks and unpacks `sha256` into a folder of its own beside the others, then
    /// moves it into place whole; then makes room.
    private func fetch(_ sha256: String) async throws {
        let bytes = Array(try await source.pack(sha256))
        guard ResourcePack.sha256(bytes) == sha256 else {
            throw MajlisError.invalidResponse("pack \(sha256) came damaged (its bytes hash to another name); it is not kept")
        }
        let pack: ResourcePack
        let archive: ZipArchive
        do {
            pack = try ResourcePack(archive: bytes)
            archive = try ZipArchive(bytes)
        } catch {
            throw MajlisError.invalidResponse("pack \(sha256) is refused: \(error.reason)")
        }
        let manager = FileManager.default
        try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let staging = directory + "/.incoming-" + UUID().uuidString
        defer { try? manager.removeItem(atPath: staging) }
        for entry in archive.entries {
            let path = staging + "/" + entry.name
            try manager.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(try archive.data(of: entry)).write(to: URL(fileURLWithPath: path))
        }
        try JSONEncoder().encode(pack.manifest).write(to: URL(fileURLWithPath: staging + "/" + Self.marker))
        let target = folderPath(sha256)
        try? manager.removeItem(atPath: target)
        try manager.moveItem(atPath: staging, toPath: target)
        evict(keeping: sha256)
    }

    /// Removes the packs used least recently until the cache holds at most `maxBytes` (never
    /// `keeping`, the one just asked for).
    private func evict(keeping: String) {
        let manager = FileManager.default
        var packs: [(name: String, used: Date, bytes: Int)] = []
        for name in (try? manager.contentsOfDirectory(atPath: directory)) ?? [] where ResourcePack.isName(name) {
            let path = folderPath(name)
            let used = (try? manager.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? .distantPast
            let bytes = (manager.enumerator(atPath: path)?.allObjects as? [String] ?? []).reduce(0) { total, file in
                total + ((try? manager.attributesOfItem(atPath: path + "/" + file)[.size] as? Int) ?? 0)
            }
            packs.append((name, used, bytes))
        }
        var total = packs.reduce(0) { $0 + $1.bytes }
        for pack in packs.sorted(by: { $0.used < $1.used }) where total > maxBytes && pack.name != keeping {
            try? manager.removeItem(atPath: folderPath(pack.name))
            total -= pack.bytes
        }
    }
}

extension Error {
    /// A pack's refusal in words.
    fileprivate var reason: String { (self as? PackError)?.reason ?? "\(self)" }
}
