import MajlisProtocol

/// Media messages: `image`, `voice` and `video`, each sending a finished upload (`Upload`) by
/// its id in `payload.media`, with an optional `payload.thumbnail` (a finished image upload).
/// The server fills in `payload.mime` and `payload.size` from the upload; the client's own
/// `width`, `height` (pixels) and `duration` (milliseconds) are kept when they are whole numbers
/// from 0 to 86,400,000. Posting one lets the conversation's members read its uploads.
enum MediaMessage {
    /// The message types that send an upload, and the MIME type each upload must have.
    static let kinds: [String: String] = ["image": "image/", "voice": "audio/", "video": "video/"]

    /// The uploads `draft` sends (its media, then its thumbnail); none for other types.
    static func references(_ draft: MessageDraft) -> [String] {
        guard kinds[draft.type] != nil, let payload = draft.payload else { return [] }
        return [payload["media"]?.stringValue, payload["thumbnail"]?.stringValue].compactMap { $0 }
    }

    /// `draft` as it is posted by `sender`: a media message must send a finished upload of its
    /// kind that the sender may read (its own, or one sent to a conversation the sender is in),
    /// and gets the upload's `mime` and `size`. `upload` looks an upload up; `mayRead` says
    /// whether the sender may read it. Other types pass as they are.
    static func completed(
        _ draft: MessageDraft, upload: (String) throws -> Upload?, mayRead: (String) throws -> Bool
    ) throws -> MessageDraft {
        guard let prefix = kinds[draft.type] else { return draft }
        guard case .object(var payload)? = draft.payload, let media = payload["media"]?.stringValue else {
            throw ProtocolError(.badRequest, "a \(draft.type) message needs payload.media, the id of a finished upload (/v1/uploads)")
        }
        let sent = try finished(media, prefix: prefix, upload: upload, mayRead: mayRead)
        payload["mime"] = .string(sent.mime)
        payload["size"] = .int(sent.length)
        if let thumbnail = payload["thumbnail"] {
            guard let id = thumbnail.stringValue else { throw ProtocolError(.badRequest, "payload.thumbnail is the id of a finished image upload") }
            _ = try finished(id, prefix: "image/", upload: upload, mayRead: mayRead)
        }
        for key in ["width", "height", "duration"] {
            guard let value = payload[key] else { continue }
            guard let number = value.intValue, (0...86_400_000).contains(number) else {
                throw ProtocolError(.badRequest, "payload.\(key) is a whole number from 0 to 86400000")
            }
            payload[key] = .int(number)
        }
        var completed = draft
        completed.payload = .object(payload)
        return completed
    }

    private static func finished(
        _ id: String, prefix: String, upload: (String) throws -> Upload?, mayRead: (String) throws -> Bool
    ) throws -> Upload {
        guard let found = try upload(id), try mayRead(id) else { throw ProtocolError(.badRequest, "no upload \(id) this user may send") }
        guard found.isComplete else { throw ProtocolError(.badRequest, "upload \(id) is not finished (\(found.received) of \(found.length) bytes)") }
        guard found.mime.hasPrefix(prefix) else { throw ProtocolError(.badRequest, "upload \(id) is \(found.mime), not \(prefix)*") }
        return found
    }
}
