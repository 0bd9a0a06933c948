/// A file a user uploads for a media message (tus 1.0, `/v1/uploads`): its declared length,
/// what has arrived of it, its type, and when an unfinished one is thrown away.
public struct Upload: Sendable, Equatable {
    /// `u` and 32 hex digits, random: the only way to name it.
    public var id: String
    /// The user who made it: the only one who may send its bytes.
    public var owner: String
    /// Bytes in all (`Upload-Length`).
    public var length: Int64
    /// Bytes stored so far (`Upload-Offset`).
    public var received: Int64
    /// Its MIME type (`filetype` of `Upload-Metadata`).
    public var mime: String
    /// `Upload-Metadata` as the client sent it (given back on `HEAD`).
    public var metadata: String
    /// Unix milliseconds.
    public var createdAt: Int64
    /// An unfinished upload is thrown away after this (Unix milliseconds).
    public var expiresAt: Int64
    /// When its last byte arrived (Unix milliseconds), nil while unfinished.
    public var completedAt: Int64?

    public var isComplete: Bool { completedAt != nil }

    public init(
        id: String, owner: String, length: Int64, received: Int64 = 0, mime: String, metadata: String = "", createdAt: Int64, expiresAt: Int64,
        completedAt: Int64? = nil
    ) {
        self.id = id
        self.owner = owner
        self.length = length
        self.received = received
        self.mime = mime
        self.metadata = metadata
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.completedAt = completedAt
    }
}
