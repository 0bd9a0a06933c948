import Foundation

/// Uploads (`Upload`) and their bytes, in chunks as they arrived (`upload_chunks`, a BLOB or
/// `bytea` each), and which conversations may read each finished one (`media_links`, written with
/// the message that sends it).
extension Store {
    /// What became of bytes offered at an offset.
    public enum Appending: Sendable, Equatable {
        /// Stored: the upload as it is now.
        case appended(Upload)
        /// The offset is not where the upload stands (it stands at `received`).
        case conflict(received: Int64)
        /// They would run past the upload's length.
        case tooLong
        /// No such upload for this user (never made, thrown away, or another's).
        case notFound
    }

    private static let uploadColumns = "id, owner, length, received, mime, metadata, created_at, expires_at, completed_at"

    private static func upload(_ row: [SQLValue]) -> Upload {
        Upload(
            id: row[0].text ?? "", owner: row[1].text ?? "", length: row[2].int ?? 0, received: row[3].int ?? 0, mime: row[4].text ?? "",
            metadata: row[5].text ?? "", createdAt: row[6].int ?? 0, expiresAt: row[7].int ?? 0, completedAt: row[8].int)
    }

    /// Makes `upload` (nothing received yet).
    public func createUpload(_ upload: Upload) throws {
        try writing { db in
            try db.run(
                "INSERT INTO uploads (\(Self.uploadColumns)) VALUES (?, ?, ?, 0, ?, ?, ?, ?, NULL)", .text(upload.id), .text(upload.owner),
                .int(upload.length), .text(upload.mime), .text(upload.metadata), .int(upload.createdAt), .int(upload.expiresAt))
        }
    }

    /// Upload `id`, if it is kept.
    public func upload(_ id: String) throws -> Upload? {
        try withDatabase { db in try db.query("SELECT \(Self.uploadColumns) FROM uploads WHERE id = ?", .text(id)).first.map(Self.upload) }
    }

    /// How many unfinished uploads `owner` has.
    public func unfinishedUploads(of owner: String) throws -> Int {
        try withDatabase { db in
            Int(try db.query("SELECT COUNT(*) FROM uploads WHERE owner = ? AND completed_at IS NULL", .text(owner)).first?.first?.int ?? 0)
        }
    }

    /// Stores `bytes` of `owner`'s upload `id` at `offset`, in one transaction with its new
    /// length received (finished, at `now`, with its last byte).
    public func append(_ bytes: [UInt8], to id: String, of owner: String, at offset: Int64, now: Int64) throws -> Appending {
        try writing { db in
            try db.transaction {
                guard let row = try db.query("SELECT \(Self.uploadColumns) FROM uploads WHERE id = ? AND owner = ?", .text(id), .text(owner)).first else {
                    return .notFound
                }
                var upload = Self.upload(row)
                guard upload.received == offset else { return .conflict(received: upload.received) }
                guard offset + Int64(bytes.count) <= upload.length else { return .tooLong }
                guard !bytes.isEmpty else { return .appended(upload) }
                try db.run("INSERT INTO upload_chunks (upload, start, size, data) VALUES (?, ?, ?, ?)", .text(id), .int(offset), .int(Int64(bytes.count)), .bytes(bytes))
                upload.received += Int64(bytes.count)
                if upload.received == upload.length { upload.completedAt = now }
                try db.run(
                    "UPDATE uploads SET received = ?, completed_at = ? WHERE id = ?", .int(upload.received), upload.completedAt.map(SQLValue.int) ?? .null, .text(id))
                return .appended(upload)
            }
        }
    }

    /// The bytes of upload `id` in `range` (within what was received).
    public func bytes(of id: String, in range: Range<Int64>) throws -> [UInt8] {
        try withDatabase { db in
            let rows = try db.query(
                "SELECT start, data FROM upload_chunks WHERE upload = ? AND start < ? AND start + size > ? ORDER BY start", .text(id),
                .int(range.upperBound), .int(range.lowerBound))
            var out = [UInt8]()
            out.reserveCapacity(Int(range.count))
            for row in rows {
                guard let start = row[0].int, let data = row[1].bytes else { continue }
                let from = Int(max(range.lowerBound - start, 0))
                let to = Int(min(range.upperBound - start, Int64(data.count)))
                if from < to { out += data[from..<to] }
            }
            return out
        }
    }

    /// Throws away `owner`'s upload `id` unless a message sent it; true if it was thrown away.
    public func deleteUpload(_ id: String, of owner: String) throws -> Bool {
        try writing { db in
            try db.transaction {
                guard try db.query("SELECT 1 FROM media_links WHERE media = ?", .text(id)).isEmpty else { return false }
                guard try db.run("DELETE FROM uploads WHERE id = ? AND owner = ?", .text(id), .text(owner)) == 1 else { return false }
                try db.run("DELETE FROM upload_chunks WHERE upload = ?", .text(id))
                return true
            }
        }
    }

    /// Throws away the unfinished uploads whose time ran out by `now`; returns how many.
    @discardableResult
    public func expireUploads(now: Int64) throws -> Int {
        try writing { db in
            try db.transaction {
                let ids = try db.query("SELECT id FROM uploads WHERE completed_at IS NULL AND expires_at <= ?", .int(now)).compactMap { $0.first?.text }
                for id in ids {
                    try db.run("DELETE FROM upload_chunks WHERE upload = ?", .text(id))
                    try db.run("DELETE FROM uploads WHERE id = ?", .text(id))
                }
                return ids.count
            }
        }
    }

    /// Whether `user` may read finished upload `id`: its owner, or a member of a conversation a
    /// message sent it to.
    public func mayRead(_ id: String, user: String) throws -> Bool {
        try withDatabase { db in
            if try !db.query("SELECT 1 FROM uploads WHERE id = ? AND owner = ?", .text(id), .text(user)).isEmpty { return true }
            return try !db.query(
                #"SELECT 1 FROM media_links l JOIN conversation_members m ON m.conversation = l.conversation WHERE l.media = ? AND m."user" = ?"#,
                .text(id), .text(user)
            ).isEmpty
        }
    }

    /// Whether upload `id` was sent to conversation `conversation` already (it may be sent there again by anyone who can read it).
    static func isLinked(_ id: String, to conversation: String, in db: any SQLDatabase) throws -> Bool {
        try !db.query("SELECT 1 FROM media_links WHERE media = ? AND conversation = ?", .text(id), .text(conversation)).isEmpty
    }

    /// Lets the members of `conversation` read `media` (in the transaction posting the message that sends it).
    static func link(_ media: [String], to conversation: String, in db: any SQLDatabase) throws {
        for id in media {
            try db.run("INSERT INTO media_links (media, conversation) VALUES (?, ?) ON CONFLICT DO NOTHING", .text(id), .text(conversation))
        }
    }
}
