import Foundation
import MajlisPacks

/// Resource packs (docs/protocol.md section 19), by the SHA-256 of their bytes. Each pack id has
/// one current version, the one uploaded last; a version another replaced, or whose pack was
/// retired, is still served for `Store.packKeepDays` (clients that listed it may still fetch
/// it), then deleted.
extension Store {
    /// A pack as the catalogue lists it.
    public struct StoredPack: Sendable, Equatable {
        public var sha256: String
        public var manifest: PackManifest
        public var size: Int
        public var createdAt: Int64

        public init(sha256: String, manifest: PackManifest, size: Int, createdAt: Int64) {
            self.sha256 = sha256
            self.manifest = manifest
            self.size = size
            self.createdAt = createdAt
        }
    }

    /// Days a replaced or retired version is still served.
    public static let packKeepDays = 30

    /// Keeps `pack` (its archive `bytes`) as its id's current version (a version uploaded again
    /// becomes current again); whether it was new.
    @discardableResult
    public func addPack(_ pack: ResourcePack, bytes: [UInt8], now: Int64) throws -> Bool {
        let manifest = String(decoding: try JSONEncoder().encode(pack.manifest), as: UTF8.self)
        return try writing { db in
            try db.transaction {
                let existed = try !db.query("SELECT 1 FROM packs WHERE sha256 = ?", .text(pack.sha256)).isEmpty
                try db.run(
                    """
                    INSERT INTO packs (sha256, id, kind, manifest, size, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (sha256) DO UPDATE SET replaced_at = NULL
                    """,
                    .text(pack.sha256), .text(pack.manifest.id), .text(pack.manifest.kind.rawValue), .text(manifest), .int(Int64(pack.size)),
                    .bytes(bytes), .int(now))
                try db.run(
                    "UPDATE packs SET replaced_at = ? WHERE id = ? AND sha256 <> ? AND replaced_at IS NULL", .int(now), .text(pack.manifest.id),
                    .text(pack.sha256))
                return !existed
            }
        }
    }

    /// The current version of every pack, by id.
    public func packCatalogue() throws -> [StoredPack] {
        try withDatabase { db in
            try db.query("SELECT sha256, manifest, size, created_at FROM packs WHERE replaced_at IS NULL ORDER BY id").compactMap { row in
                guard let sha = row[0].text, let json = row[1].text, let manifest = try? JSONDecoder().decode(PackManifest.self, from: Data(json.utf8)) else {
                    return nil
                }
                return StoredPack(sha256: sha, manifest: manifest, size: Int(row[2].int ?? 0), createdAt: row[3].int ?? 0)
            }
        }
    }

    /// The names of every kept version, current or not.
    public func keptPacks() throws -> [String] {
        try withDatabase { db in try db.query("SELECT sha256 FROM packs ORDER BY sha256").compactMap { $0.first?.text } }
    }

    /// A kept version's manifest.
    public func packManifest(_ sha256: String) throws -> PackManifest? {
        try withDatabase { db in
            try db.query("SELECT manifest FROM packs WHERE sha256 = ?", .text(sha256)).first?.first?.text.flatMap {
                try? JSONDecoder().decode(PackManifest.self, from: Data($0.utf8))
            }
        }
    }

    /// A kept version's size, nil when there is none of that name.
    public func packSize(_ sha256: String) throws -> Int? {
        try withDatabase { db in try db.query("SELECT size FROM packs WHERE sha256 = ?", .text(sha256)).first?.first?.int.map(Int.init) }
    }

    /// `range` of a kept version's bytes.
    public func packBytes(_ sha256: String, in range: Range<Int>) throws -> [UInt8] {
        try withDatabase { db in
            let slice = db.dialect == .sqlite ? "substr(data, ?, ?)" : "substring(data from ?::int for ?::int)"
            return try db.query("SELECT \(slice) FROM packs WHERE sha256 = ?", .int(Int64(range.lowerBound + 1)), .int(Int64(range.count)), .text(sha256))
                .first?.first?.bytes ?? []
        }
    }

    /// Takes pack `id` out of the catalogue (its versions are still served for a while); whether
    /// it was in it.
    public func retirePack(_ id: String, now: Int64) throws -> Bool {
        try writing { db in try db.run("UPDATE packs SET replaced_at = ? WHERE id = ? AND replaced_at IS NULL", .int(now), .text(id)) > 0 }
    }

    /// Deletes the versions replaced or retired before `before`; how many.
    @discardableResult
    public func prunePacks(replacedBefore before: Int64) throws -> Int {
        try writing { db in try db.run("DELETE FROM packs WHERE replaced_at IS NOT NULL AND replaced_at < ?", .int(before)) }
    }
}
