import Foundation

/// How media messages' files go up to the server and come back (docs/protocol.md section 18):
/// a resumable upload is made, asked where it stands, and sent on from there; a finished one is
/// read back, whole or by range. `HTTPMediaTransfer` speaks tus 1.0 to the server;
/// `MemoryMediaTransfer` is its twin in memory, for tests and previews.
public protocol MediaTransfer: Sendable {
    /// Makes an upload of `length` bytes of `type` (a MIME type); its id.
    func create(length: Int64, type: String, filename: String?) async throws(MajlisError) -> String

    /// The bytes the server holds of `upload`; nil when it is not kept any more (expired,
    /// deleted): make another.
    func offset(of upload: String) async throws(MajlisError) -> Int64?

    /// Sends `bytes` to `upload` at `offset`; the upload's offset after them.
    /// `.server(conflict)` when the upload does not stand at `offset`: ask `offset(of:)`.
    func append(_ bytes: Data, to upload: String, at offset: Int64) async throws(MajlisError) -> Int64

    /// A finished upload's bytes: all of them, or those of `range`.
    func download(_ media: String, range: Range<Int64>?) async throws(MajlisError) -> Data
}
