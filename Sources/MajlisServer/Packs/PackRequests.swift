import Dispatch
import Foundation
import MajlisPacks
import MajlisProtocol
import MajlisTransport

/// Resource packs over HTTP (docs/protocol.md section 19). The catalogue (`GET /v1/packs`) and
/// the packs themselves (`GET /v1/packs/{sha256}`, with ranges) are for anyone: a pack's name is
/// its content's hash, so it is answered as immutable and may be kept by any cache. Uploading
/// (`POST /v1/packs`, the archive as the body) and retiring (`DELETE /v1/packs/{id}`) are the
/// app's backend's, with an admin token.
final class PackRequests: Sendable {
    let context: ServerContext
    private let queue = DispatchQueue(label: "majlis.packs", attributes: .concurrent)

    init(context: ServerContext) {
        self.context = context
    }

    static func owns(_ path: String) -> Bool {
        path == "/v1/packs" || path.hasPrefix("/v1/packs/")
    }

    // MARK: Uploads

    /// Where an upload's archive goes as it arrives; nil (then `refusal` says why) unless it is
    /// a `POST /v1/packs` with an admin token.
    func sink(for request: HTTPRequest) -> (any HTTPBodySink)? {
        refusal(request) == nil ? PackSink(packs: self) : nil
    }

    /// Why a request's body is not read, from its headers.
    func refusal(_ request: HTTPRequest) -> HTTPResponse? {
        guard request.path == "/v1/packs", request.method == "POST" else {
            return Self.failure(405, .unsupported, "only POST /v1/packs takes a body", ["Allow": "POST"])
        }
        return admin(request)
    }

    /// An archive past `ResourcePack.maxBytes`: thrown away as it arrives, and answered so.
    static let tooLarge = failure(413, .badRequest, "a pack is at most \(ResourcePack.maxBytes) bytes")

    /// Checks and keeps an uploaded archive: 201 with the pack as the catalogue lists it (200 when
    /// this very pack was there already), or 400 with why it is refused.
    func publish(_ bytes: [UInt8], answering exchange: HTTPExchange) {
        queue.async { [self] in
            do {
                let pack = try ResourcePack(archive: bytes)
                let new = try context.store.addPack(pack, bytes: bytes, now: context.now())
                try context.packIndex.reload(from: context.store)
                context.logger.info("packs: \(pack.manifest.id) \(pack.sha256) \(new ? "added" : "made current again") (\(pack.size) bytes)")
                guard let stored = try context.store.packCatalogue().first(where: { $0.sha256 == pack.sha256 }) else {
                    throw SQLFailure(description: "pack \(pack.sha256) is not in the catalogue after it was stored")
                }
                exchange.respond(Self.json(new ? 201 : 200, ["pack": CatalogueEntry(stored)]))
            } catch let error as PackError {
                exchange.respond(Self.failure(400, .badRequest, "the pack is refused: \(error.reason)"))
            } catch {
                context.logger.error("packs: storing a pack failed: \(error)")
                exchange.respond(Self.failure(503, .internal, "the store did not answer; try again", ["Retry-After": "1"]))
            }
        }
    }

    // MARK: Calls without a body

    func handle(_ exchange: HTTPExchange) {
        queue.async { [self] in
            do {
                exchange.respond(try answer(exchange.request))
            } catch let failure as APIFailure {
                exchange.respond(failure.response)
            } catch {
                context.logger.error("packs: \(exchange.request.method) \(exchange.request.path): \(error)")
                exchange.respond(Self.failure(503, .internal, "the store did not answer; try again", ["Retry-After": "1"]))
            }
        }
    }

    private func answer(_ request: HTTPRequest) throws -> HTTPResponse {
        let name = request.path == "/v1/packs" ? nil : String(request.path.dropFirst("/v1/packs/".count))
        switch (request.method, name) {
        case ("GET", nil), ("HEAD", nil):
            let catalogue = try context.store.packCatalogue()
            let version = ResourcePack.sha256(Array(catalogue.map(\.sha256).joined(separator: "\n").utf8))
            var answer = Self.json(200, Catalogue(version: version, packs: catalogue.map(CatalogueEntry.init)))
            answer.headers["Cache-Control"] = "no-cache"
            answer.headers["ETag"] = "\"\(version)\""
            if request.headers["if-none-match"] == "\"\(version)\"" { return HTTPResponse(status: 304, contentType: "", body: [], headers: answer.headers) }
            return answer
        case ("GET", let name?), ("HEAD", let name?):
            return try pack(name, request)
        case ("DELETE", let id?):
            if let refusal = admin(request) { return refusal }
            guard try context.store.retirePack(id, now: context.now()) else { throw APIFailure(ProtocolError(.badRequest, "no pack \(id) in the catalogue"), status: 404) }
            context.logger.info("packs: \(id) retired")
            return HTTPResponse(status: 204, contentType: "", body: [])
        case ("POST", nil):
            return Self.failure(400, .badRequest, "send the pack's archive as the body (Content-Type: application/zip)")
        default:
            return Self.failure(405, .unsupported, "\(request.method) is not offered here", ["Allow": name == nil ? "GET, HEAD, POST" : "GET, HEAD, DELETE"])
        }
    }

    /// `GET /v1/packs/{sha256}`: a kept version's archive, all of it or the one range asked for.
    private func pack(_ name: String, _ request: HTTPRequest) throws -> HTTPResponse {
        guard ResourcePack.isName(name), let size = try context.store.packSize(name) else {
            throw APIFailure(ProtocolError(.badRequest, "no pack \(name)"), status: 404)
        }
        var headers = ["Accept-Ranges": "bytes", "Cache-Control": "public, max-age=31536000, immutable", "ETag": "\"\(name)\""]
        if request.headers["if-none-match"] == "\"\(name)\"" { return HTTPResponse(status: 304, contentType: "", body: [], headers: headers) }
        var status: UInt32 = 200
        var range = 0..<size
        if let asked = request.headers["range"] {
            guard let wanted = UploadRequests.range(asked, length: Int64(size)) else {
                return Self.failure(416, .badRequest, "the range \(asked) is not within the \(size) bytes", ["Content-Range": "bytes */\(size)"])
            }
            range = Int(wanted.lowerBound)..<Int(wanted.upperBound)
            status = 206
            headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"
        }
        return HTTPResponse(status: status, contentType: "application/zip", body: try context.store.packBytes(name, in: range), headers: headers)
    }

    // MARK: Parts

    /// Why the request may not change packs: no token, or one without the admin grant.
    private func admin(_ request: HTTPRequest) -> HTTPResponse? {
        guard let header = request.headers["authorization"], header.lowercased().hasPrefix("bearer ") else {
            return Self.failure(401, .unauthorized, "send Authorization: Bearer <token> (a JWT with the admin grant)")
        }
        do throws(ProtocolError) {
            let claims = try AccessToken.verify(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces), keys: context.config.keys, now: context.now() / 1000)
            guard claims.effectiveGrants.admin, claims.room == nil || claims.room == "*" else {
                return Self.failure(403, .forbidden, "the token does not grant admin for the whole server")
            }
            return nil
        } catch {
            return APIFailure(error).response
        }
    }

    /// The catalogue: its `version` (changes whenever a pack does) and the current packs.
    struct Catalogue: Encodable {
        var version: String
        var packs: [CatalogueEntry]
    }

    /// A pack as the catalogue lists it: its manifest's fields, its name and size, and where to
    /// fetch it.
    struct CatalogueEntry: Encodable {
        var id: String
        var sha256: String
        var kind: PackKind
        var names: [String: String]
        var items: [PackItem]
        var size: Int
        var createdAt: Int64
        var url: String

        init(_ pack: Store.StoredPack) {
            id = pack.manifest.id
            sha256 = pack.sha256
            kind = pack.manifest.kind
            names = pack.manifest.names
            items = pack.manifest.items
            size = pack.size
            createdAt = pack.createdAt
            url = "/v1/packs/\(pack.sha256)"
        }
    }

    static func json(_ status: UInt32, _ value: some Encodable) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: Array(WireEncoder.encodeSorted(value)))
    }

    static func failure(_ status: UInt32, _ code: ErrorCode, _ message: String, _ headers: [String: String] = [:]) -> HTTPResponse {
        APIFailure(ProtocolError(code, message), status: status, headers: headers).response
    }
}
