import Foundation
import MajlisProtocol
import MajlisTransport

/// Gifts: the app's backend (which owns what they cost) sends them, and reads a room's
/// leaderboard of givers and receivers.
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

    /// `GET /v1/rooms/{room}/gifts/leaders`: the room's top givers and receivers by items, of
    /// gifts sent from `since` to before `until` (Unix ms; all time by default) and within one UTC
    /// day if `day` (YYYY-MM-DD) is given.
    func giftLeaders(_ call: APICall) throws {
        let room = call.parameters.room ?? ""
        guard Identifier.isValid(room) else { throw APIFailure(ProtocolError(.badRequest, "the room must be an id of 1 to 64 characters of A-Z a-z 0-9 _ . @ -")) }
        let limit = try call.queryInt("limit", in: 1...100) ?? 10
        var since = Int64(try call.queryInt("since", in: 0...Int.max) ?? 0)
        var until = Int64(try call.queryInt("until", in: 0...Int.max) ?? Int.max)
        if let day = call.query["day"] {
            guard let start = Self.dayStart(day) else { throw APIFailure(ProtocolError(.badRequest, "day must be a date, YYYY-MM-DD (UTC)")) }
            since = max(since, start)
            until = min(until, start + 86_400_000)
        }
        let (givers, receivers) = try context.store.giftLeaders(room: room, since: since, until: until, limit: limit)
        struct Leaders: Encodable {
            var givers: [Store.GiftTally]
            var receivers: [Store.GiftTally]
        }
        call.exchange.respond(HTTPResponse(status: 200, body: Array(WireEncoder.encode(Leaders(givers: givers, receivers: receivers)))))
    }

    /// Unix ms of midnight UTC that begins `day` (YYYY-MM-DD), if it is a date.
    static func dayStart(_ day: String) -> Int64? {
        let parts = day.split(separator: "-", omittingEmptySubsequences: false)
        guard day.count == 10, parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let date = Int(parts[2]),
            (1...9999).contains(year), (1...12).contains(month), (1...31).contains(date)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: date)
        guard components.isValidDate(in: calendar), let start = calendar.date(from: components) else { return nil }
        return Int64(start.timeIntervalSince1970 * 1_000)
    }
}
