import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// Uploads for media messages, by tus 1.0 (core, creation, expiration and termination) under
/// `/v1/uploads`, and their downloads under `/v1/media/{id}` with byte ranges (docs/protocol.md
/// section 18). Every call but `OPTIONS` carries the user's own access token
/// (`Authorization: Bearer`, granting `chat`); an upload's bytes are its owner's to send, and a
/// finished one is readable by its owner and by the members of every conversation a message sent
/// it to.
///
/// Threads: a `PATCH` body goes to an `UploadSink` on the service thread; every write is made on
/// `writes`, in order; other calls are answered on `reads`.
final class UploadRequests: Sendable {
    let context: ServerContext
    /// Where uploads' bytes are stored, one chunk after another.
    let writes = DispatchQueue(label: "majlis.uploads")
    private let reads = DispatchQueue(label: "majlis.uploads.reads", attributes: .concurrent)
    /// The PATCH under way for each upload.
    private let active = Mutex<[String: UploadSink]>([:])

    /// The largest upload, and the largest of each kind of file.
    static let maxLength: Int64 = 50 << 20
    static let maxLengths: [String: Int64] = ["image/": 10 << 20, "audio/": 10 << 20, "video/": 50 << 20, "text/": 4 << 20]
    /// The files a media message may send, and a client's log (`text/plain`, `log.deliver`).
    static let types: Set<String> = [
        LogRequest.type,
        "image/jpeg", "image/png", "image/gif", "image/webp", "audio/ogg", "audio/webm", "audio/mp4", "audio/mpeg", "audio/aac", "audio/wav",
        "video/mp4", "video/webm", "video/quicktime",
    ]
    /// How long an unfinished upload is kept.
    static let lifetime = Duration.seconds(86_400)
    /// Unfinished uploads one user may have at once.
    static let maxUnfinished = 20
    /// Bytes a PATCH keeps before storing them as a chunk: a cut connection loses none of what
    /// arrived, and a chunk is one row.
    static let chunkBytes = 256 << 10
    static let version = "1.0.0"

    init(context: ServerContext) { self.context = context }

    /// Whether `path` is an upload's or a media file's.
    static func owns(_ path: String) -> Bool {
        path == "/v1/uploads" || path.hasPrefix("/v1/uploads/") || path.hasPrefix("/v1/media/")
    }

    // MARK: Bodies (service thread)

    /// Where a `PATCH`'s body goes, when it may be sent; nil otherwise (`refusal` says why).
    func sink(for request: HTTPRequest) -> (any HTTPBodySink)? {
        guard request.method == "PATCH", let (id, owner, offset) = try? patch(request) else { return nil }
        let sink = UploadSink(id: id, owner: owner, offset: offset, uploads: self)
        let older = active.withLock { $0.updateValue(sink, forKey: id) }
        older?.supersede()
        return sink
    }

    /// Why a request with a body is not read, or nil. Only a `PATCH` has a body.
    func refusal(_ request: HTTPRequest) -> HTTPResponse? {
        do {
            guard request.method == "PATCH" else {
                throw Self.refuse(400, .badRequest, "only PATCH sends bytes (creation with upload is not offered)")
            }
            _ = try patch(request)
            return nil
        } catch let refusal as Refusal {
            return refusal.answer
        } catch {
            return Self.failure(400, .badRequest, "\(error)")
        }
    }

    /// A PATCH's upload, caller and offset, checked from its headers.
    private func patch(_ request: HTTPRequest) throws(Refusal) -> (id: String, owner: String, offset: Int64) {
        let id = try uploadId(request.path)
        let owner = try caller(request)
        try tusVersion(request)
        guard request.headers["content-type"]?.lowercased() == "application/offset+octet-stream" else {
            throw Self.refuse(415, .badRequest, "send the bytes as Content-Type: application/offset+octet-stream")
        }
        guard let text = request.headers["upload-offset"], let offset = Int64(text), offset >= 0 else {
            throw Self.refuse(400, .badRequest, "send Upload-Offset: where these bytes go (HEAD says)")
        }
        return (id, owner, offset)
    }

    /// The PATCH on `sink`'s upload ended (its bytes stored or refused).
    func ended(_ sink: UploadSink) {
        active.withLock { if $0[sink.id] === sink { $0[sink.id] = nil } }
    }

    // MARK: Calls without a body

    func handle(_ exchange: HTTPExchange) {
        reads.async { [self] in
            do {
                exchange.respond(try answer(exchange.request))
            } catch let refusal as Refusal {
                exchange.respond(refusal.answer)
            } catch {
                context.logger.error("uploads: \(exchange.request.method) \(exchange.request.path): \(error)")
                exchange.respond(Self.failure(503, .internal, "the store did not answer; try again", ["Retry-After": "1"]))
            }
        }
    }

    private func answer(_ request: HTTPRequest) throws -> HTTPResponse {
        if request.path.hasPrefix("/v1/media/") {
            guard HTTPRouteTable.isRead(request) else { throw Self.refuse(405, .unsupported, "media is read with GET", ["Allow": "GET, HEAD"]) }
            return try media(request)
        }
        if request.method == "OPTIONS" {
            return Self.answer(204, ["Tus-Version": Self.version, "Tus-Extension": "creation,expiration,termination", "Tus-Max-Size": String(Self.maxLength)])
        }
        let owner = try caller(request)
        try tusVersion(request)
        switch (request.method, request.path == "/v1/uploads") {
        case ("POST", true): return try create(request, owner: owner)
        case ("HEAD", false): return try head(try uploadId(request.path), owner: owner)
        case ("PATCH", false):
            // No bytes (Content-Length 0): says where the upload stands, if the offset is right.
            let (id, _, offset) = try patch(request)
            return try writes.sync {
                switch try context.store.append([], to: id, of: owner, at: offset, now: context.now()) {
                case .appended(let upload): Self.answer(204, ["Upload-Offset": String(upload.received)])
                case .conflict(let received): Self.failure(409, .conflict, "the upload holds \(received) bytes", ["Upload-Offset": String(received)])
                case .tooLong, .notFound: Self.failure(404, .badRequest, "no upload \(id) of yours (it may have expired)")
                }
            }
        case ("DELETE", false): return try delete(try uploadId(request.path), owner: owner)
        default:
            throw Self.refuse(405, .unsupported, "\(request.method) is not offered here", ["Allow": request.path == "/v1/uploads" ? "POST, OPTIONS" : "HEAD, PATCH, DELETE, OPTIONS"])
        }
    }

    /// `POST /v1/uploads`: `Upload-Length` and `Upload-Metadata` (its `filetype`, and any
    /// `filename`) make an upload, answered 201 with its `Location`.
    private func create(_ request: HTTPRequest, owner: String) throws -> HTTPResponse {
        guard let text = request.headers["upload-length"], let length = Int64(text), length > 0 else {
            throw Self.refuse(400, .badRequest, "send Upload-Length: the file's size in bytes (Upload-Defer-Length is not offered)")
        }
        let metadata = request.headers["upload-metadata"] ?? ""
        guard let mime = Self.metadata(metadata)["filetype"]?.lowercased(), Self.types.contains(mime) else {
            throw Self.refuse(
                415, .badRequest, "name the file's type in Upload-Metadata (filetype, base64): one of \(Self.types.sorted().joined(separator: ", "))")
        }
        let limit = Self.maxLengths.first { mime.hasPrefix($0.key) }?.value ?? Self.maxLength
        guard length <= limit else { throw Self.refuse(413, .tooLarge, "a \(mime) file is at most \(limit) bytes") }
        guard try context.store.unfinishedUploads(of: owner) < Self.maxUnfinished else {
            throw Self.refuse(429, .rateLimited, "you have \(Self.maxUnfinished) unfinished uploads: finish or delete one first")
        }
        let now = context.now()
        var random = SystemRandomNumberGenerator()
        let id = "u" + (0..<4).map { _ in String(format: "%08x", UInt32.random(in: .min ... .max, using: &random)) }.joined()
        let upload = Upload(
            id: id, owner: owner, length: length, received: 0, mime: mime, metadata: metadata, createdAt: now,
            expiresAt: now + Self.lifetime.milliseconds, completedAt: nil)
        try context.store.createUpload(upload)
        return Self.answer(201, ["Location": "/v1/uploads/\(id)", "Upload-Expires": Self.httpDate(upload.expiresAt)])
    }

    /// `HEAD /v1/uploads/{id}`: where the upload stands.
    private func head(_ id: String, owner: String) throws -> HTTPResponse {
        // What earlier PATCHes handed over is stored first.
        let upload = try writes.sync { try context.store.upload(id) }
        guard let upload, upload.owner == owner else { throw Self.refuse(404, .badRequest, "no upload \(id) of yours (it may have expired)") }
        var headers = [
            "Upload-Offset": String(upload.received), "Upload-Length": String(upload.length), "Cache-Control": "no-store",
        ]
        if !upload.metadata.isEmpty { headers["Upload-Metadata"] = upload.metadata }
        if !upload.isComplete { headers["Upload-Expires"] = Self.httpDate(upload.expiresAt) }
        return Self.answer(200, headers)
    }

    /// `DELETE /v1/uploads/{id}`: throws away an upload no message has sent.
    private func delete(_ id: String, owner: String) throws -> HTTPResponse {
        active.withLock { $0[id] }?.supersede()
        guard let upload = try context.store.upload(id), upload.owner == owner else {
            throw Self.refuse(404, .badRequest, "no upload \(id) of yours (it may have expired)")
        }
        guard try writes.sync(execute: { try context.store.deleteUpload(id, of: owner) }) else {
            throw Self.refuse(409, .conflict, "upload \(id) was sent in a message: it stays")
        }
        return Self.answer(204, [:])
    }

    /// `GET /v1/media/{id}`: a finished upload's bytes (all, or the one range asked for).
    private func media(_ request: HTTPRequest) throws -> HTTPResponse {
        let user = try caller(request)
        let id = String(request.path.dropFirst("/v1/media/".count))
        guard let upload = try context.store.upload(id), upload.isComplete, try context.store.mayRead(id, user: user) else {
            throw Self.refuse(404, .badRequest, "no media \(id) you may read")
        }
        var headers = ["Accept-Ranges": "bytes", "Cache-Control": "private, max-age=31536000, immutable"]
        var status: UInt32 = 200
        var range: Range<Int64> = 0..<upload.length
        if let asked = request.headers["range"] {
            guard let wanted = Self.range(asked, length: upload.length) else {
                throw Self.refuse(416, .badRequest, "the range \(asked) is not within the \(upload.length) bytes", ["Content-Range": "bytes */\(upload.length)"])
            }
            range = wanted
            status = 206
            headers["Content-Range"] = "bytes \(wanted.lowerBound)-\(wanted.upperBound - 1)/\(upload.length)"
        }
        // HEAD too: the answer's length is its body's (which is then not sent).
        let body = try context.store.bytes(of: id, in: range)
        return HTTPResponse(status: status, contentType: upload.mime, body: body, headers: headers)
    }

    // MARK: Parts

    /// The user whose token the request carries (it must grant `chat`).
    private func caller(_ request: HTTPRequest) throws(Refusal) -> String {
        guard let header = request.headers["authorization"], header.lowercased().hasPrefix("bearer ") else {
            throw Self.refuse(401, .unauthorized, "send Authorization: Bearer <your access token>", ["WWW-Authenticate": "Bearer"])
        }
        let claims: AccessClaims
        do {
            claims = try AccessToken.verify(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces), keys: context.config.keys, now: context.now() / 1000)
        } catch {
            throw Self.refuse(401, error.code, error.message, ["WWW-Authenticate": "Bearer"])
        }
        guard claims.effectiveGrants.chat else { throw Self.refuse(403, .forbidden, "the token does not grant chat") }
        return claims.sub
    }

    private func tusVersion(_ request: HTTPRequest) throws(Refusal) {
        guard request.headers["tus-resumable"] == Self.version else {
            throw Self.refuse(412, .badRequest, "send Tus-Resumable: \(Self.version)", ["Tus-Version": Self.version])
        }
    }

    private func uploadId(_ path: String) throws(Refusal) -> String {
        let id = path.dropFirst("/v1/uploads/".count)
        guard path.hasPrefix("/v1/uploads/"), !id.isEmpty, !id.contains("/") else { throw Self.refuse(404, .unsupported, "no such path: \(path)") }
        return String(id)
    }

    /// `Upload-Metadata`'s pairs (`key base64`, comma-separated), decoded; a key without a value maps to "".
    static func metadata(_ header: String) -> [String: String] {
        var pairs: [String: String] = [:]
        for pair in header.split(separator: ",") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            guard let key = parts.first else { continue }
            let value = parts.count > 1 ? Data(base64Encoded: String(parts[1])).map { String(decoding: $0, as: UTF8.self) } : ""
            if let value { pairs[String(key)] = value }
        }
        return pairs
    }

    /// One range of a `Range: bytes=` header (`a-b`, `a-`, `-n`) within `length` bytes, or nil.
    static func range(_ header: String, length: Int64) -> Range<Int64>? {
        guard header.hasPrefix("bytes="), !header.contains(","), length > 0 else { return nil }
        let spec = header.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        let (first, last) = (Int64(spec[0]), Int64(spec[1]))
        switch (spec[0].isEmpty, spec[1].isEmpty) {
        case (true, false):
            guard let suffix = last, suffix > 0 else { return nil }
            return max(0, length - suffix)..<length
        case (false, _):
            guard let start = first, start < length else { return nil }
            if spec[1].isEmpty { return start..<length }
            guard let end = last, end >= start else { return nil }
            return start..<min(end + 1, length)
        default:
            return nil
        }
    }

    /// An RFC 9110 date (`Upload-Expires`).
    static func httpDate(_ milliseconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// An answer with no body, as tus has them.
    static func answer(_ status: UInt32, _ headers: [String: String]) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "", body: [], headers: headers.merging(["Tus-Resumable": version]) { own, _ in own })
    }

    /// A call refused, with its answer.
    struct Refusal: Error {
        var answer: HTTPResponse
    }

    static func refuse(_ status: UInt32, _ code: ErrorCode, _ message: String, _ headers: [String: String] = [:]) -> Refusal {
        Refusal(answer: failure(status, code, message, headers))
    }

    /// A refusal's answer: the protocol's error body, with tus's version.
    static func failure(_ status: UInt32, _ code: ErrorCode, _ message: String, _ headers: [String: String] = [:]) -> HTTPResponse {
        var answer = APIFailure(ProtocolError(code, message), status: status, headers: headers).response
        answer.headers["Tus-Resumable"] = version
        return answer
    }
}
