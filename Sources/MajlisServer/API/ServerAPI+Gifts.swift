import Foundation
import MajlisProtocol
import MajlisTransport

/// Gifts: the app's backend (which owns what they cost) sends them.
extension ServerAPI {
    /// `POST /v1/rooms/{room}/gifts`: `gift.send` with the body's fields; `key` may come as the
    /// `Idempotency-Key` header instead (then a repeated call also answers as the first did).
    func sendGift(_ call: APICall) throws {
        var body = try call.body()
        if body["key"] == nil, let key = call.request.headers["idempotency-key"] { body["key"] = .string(key) }
        guard body["key"] != nil else {
            throw APIFailure(ProtocolError(.badRequest, "name the gift: key in the body or an Idempotency-Key header (1 to 64 characters)"))
        }
        if case .string(let pack) = body["pack"], case .string(let item) = body["item"], !context.packIndex.has(pack, item: item, kind: .gift) {
            throw APIFailure(ProtocolError(.badRequest, "no gift \(item) in a pack \(pack) this server keeps (GET /v1/packs lists them)"), status: 404)
        }
        try run(call, op: "gift.send", args: body)
    }

}
