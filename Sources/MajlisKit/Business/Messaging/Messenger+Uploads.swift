import Foundation
import MajlisProtocol

/// Media messages (docs/protocol.md section 18): the file is uploaded, then the message naming
/// it is sent. Both steps are kept with the pending message, so that an app killed or cut off
/// mid-upload goes on from where the server stands when it starts again, and the message is
/// posted once.
extension Messenger {
    /// The message type a file of `mime` is sent as, and what a client that cannot show it
    /// shows instead.
    static func mediaKind(_ mime: String) -> (type: String, fallback: String)? {
        if mime.hasPrefix("image/") { return ("image", "[Photo]") }
        if mime.hasPrefix("audio/") { return ("voice", "[Voice message]") }
        if mime.hasPrefix("video/") { return ("video", "[Video]") }
        return nil
    }

    /// Sends the file at `file` (of MIME type `mime`) as an image, voice or video message, with
    /// the app's `thumbnail` (an image file it made, for a video or a large image) and `details`
    /// for the payload (`width`, `height` in pixels, `duration` in ms). Pending at once, with
    /// its upload's progress; kept until it is stored, as `send` keeps any message. The app keeps
    /// the files until the message is no longer pending.
    @discardableResult
    public func send(
        file: String, type mime: String, to target: MessageTarget, thumbnail: (file: String, type: String)? = nil, details: [String: JSONValue] = [:],
        text: String? = nil, fallback: String? = nil, clientMsgId: String = UUID().uuidString
    ) async throws(MajlisError) -> ConversationMessage? {
        guard transfer != nil else { throw MajlisError.misuse("this Messenger was made without a MediaTransfer: it sends no files") }
        guard let kind = Self.mediaKind(mime) else { throw MajlisError.misuse("\(mime) is not an image, audio or video type") }
        var uploads = [PendingUpload(field: "media", file: file, type: mime, length: try Self.size(of: file))]
        if let thumbnail {
            guard thumbnail.type.hasPrefix("image/") else { throw MajlisError.misuse("a thumbnail is an image, not \(thumbnail.type)") }
            uploads.append(PendingUpload(field: "thumbnail", file: thumbnail.file, type: thumbnail.type, length: try Self.size(of: thumbnail.file)))
        }
        let draft = MessageDraft(type: kind.type, text: text, payload: .object(details), fallback: fallback ?? kind.fallback, clientMsgId: clientMsgId)
        change { $0.pending.append(PendingMessage(target: target, draft: draft, status: .sending, createdAt: clock.now(), uploads: uploads)) }
        return try await post(clientMsgId)
    }

    /// A finished upload's bytes (`media` or `thumbnail` of a message's payload), or those of `range`.
    public func download(_ media: String, range: Range<Int64>? = nil) async throws(MajlisError) -> Data {
        guard let transfer else { throw MajlisError.misuse("this Messenger was made without a MediaTransfer") }
        return try await transfer.download(media, range: range)
    }

    /// Uploads what the pending message `clientMsgId` carries and has not finished, each from
    /// where the server says it stands (a new upload when the server no longer keeps it), and
    /// names each finished one in the message's payload.
    func upload(_ clientMsgId: String) async throws(MajlisError) {
        while let (message, index) = unfinished(clientMsgId) {
            guard let transfer else { throw MajlisError.misuse("this Messenger was made without a MediaTransfer: it sends no files") }
            var item = state.pending[message].uploads[index]
            guard try Self.size(of: item.file) == item.length else { throw MajlisError.misuse("\(item.file) changed since the message was written") }
            if let upload = item.upload {
                if let offset = try await transfer.offset(of: upload) {
                    item.offset = offset
                } else {
                    logger.info("messaging: upload \(upload) of \(clientMsgId) is no longer kept; uploading \(item.file) again")
                    item.upload = nil
                }
            }
            if item.upload == nil {
                item.upload = try await transfer.create(length: item.length, type: item.type, filename: URL(fileURLWithPath: item.file).lastPathComponent)
                item.offset = 0
            }
            guard let upload = item.upload else { continue }
            record(item, of: clientMsgId, at: index)
            while item.offset < item.length {
                let piece = try Self.read(item.file, at: item.offset, count: Int(min(Int64(Self.uploadPiece), item.length - item.offset)))
                do {
                    item.offset = try await transfer.append(piece, to: upload, at: item.offset)
                } catch where error.code == .conflict {
                    // Another try of it got there first: go on from where the server stands.
                    guard let offset = try await transfer.offset(of: upload) else { break }
                    item.offset = offset
                }
                record(item, of: clientMsgId, at: index)
            }
        }
    }

    /// The first upload of `clientMsgId` not finished: the message's index and the upload's.
    private func unfinished(_ clientMsgId: String) -> (Int, Int)? {
        guard let message = state.pending.firstIndex(where: { $0.id == clientMsgId }),
            let upload = state.pending[message].uploads.firstIndex(where: { !$0.isFinished })
        else { return nil }
        return (message, upload)
    }

    /// Keeps `item`'s state with its message; a finished one is named in the payload.
    private func record(_ item: PendingUpload, of clientMsgId: String, at index: Int) {
        change { state in
            guard let message = state.pending.firstIndex(where: { $0.id == clientMsgId }), index < state.pending[message].uploads.count else { return }
            state.pending[message].uploads[index] = item
            if item.isFinished, let upload = item.upload {
                var payload = state.pending[message].draft.payload?.objectValue ?? [:]
                payload[item.field] = .string(upload)
                state.pending[message].draft.payload = .object(payload)
            }
        }
    }

    static func size(of file: String) throws(MajlisError) -> Int64 {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file), let size = (attributes[.size] as? NSNumber)?.int64Value else {
            throw MajlisError.misuse("cannot read \(file)")
        }
        guard size > 0 else { throw MajlisError.misuse("\(file) is empty") }
        return size
    }

    static func read(_ file: String, at offset: Int64, count: Int) throws(MajlisError) -> Data {
        guard let handle = FileHandle(forReadingAtPath: file) else { throw MajlisError.misuse("cannot read \(file)") }
        defer { try? handle.close() }
        do {
            try handle.seek(toOffset: UInt64(offset))
            guard let data = try handle.read(upToCount: count), data.count == count else { throw MajlisError.misuse("\(file) is shorter than it was") }
            return data
        } catch let error as MajlisError {
            throw error
        } catch {
            throw MajlisError.misuse("cannot read \(file): \(error)")
        }
    }
}
