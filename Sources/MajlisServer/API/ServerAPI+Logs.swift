import Foundation
import MajlisProtocol
import MajlisTransport

/// Logs on request: the app's backend asks a user's client for its log, sees where the request
/// stands, and reads the log once the client delivered it (docs/protocol.md section 20).
extension ServerAPI {
    /// `POST /v1/users/{user}/logs {minutes?, until?, reason?}`: the log of the `minutes` (60 by
    /// default, at most 7 days) before `until` (Unix ms), or before now and on to when the client
    /// sends it.
    func askLog(_ call: APICall) throws {
        let user = call.parameters["user"]
        guard Identifier.isValid(user) else { throw APIFailure(ProtocolError(.badRequest, "the user must be an id of 1 to 64 characters of A-Z a-z 0-9 _ . @ -")) }
        let body = try call.body()
        let longest = LogRequest.longestSpan / 60_000
        var minutes: Int64 = 60
        if let given = body["minutes"] {
            guard let value = given.intValue, (1...longest).contains(value) else {
                throw APIFailure(ProtocolError(.badRequest, "minutes must be a whole number from 1 to \(longest)"))
            }
            minutes = value
        }
        var until: Int64?
        if let given = body["until"] {
            guard let value = given.intValue, value >= 0 else { throw APIFailure(ProtocolError(.badRequest, "until must be a time in Unix ms")) }
            until = value
        }
        let reason = body["reason"]
        guard reason == nil || (reason?.stringValue.map { !$0.isEmpty && $0.count <= 200 } ?? false) else {
            throw APIFailure(ProtocolError(.badRequest, "reason must be a text of 1 to 200 characters"))
        }
        let (span, end) = (minutes * 60_000, until)
        try messaging(call, status: 201) { messaging, now in
            let since = max(0, (end ?? now) - span)
            return try messaging.askLog(of: user, since: since, until: end, reason: reason?.stringValue, now: now)
        }
    }

    /// `GET /v1/logs/{log}/content`: the delivered log, as the client sent it (text/plain).
    func logContent(_ call: APICall) throws {
        let id = call.parameters["log"]
        guard let record = try context.store.logRequest(id) else { throw APIFailure(ProtocolError(.requestNotFound, "no log request \(id)")) }
        guard let media = record.media, let upload = try context.store.upload(media) else {
            throw APIFailure(ProtocolError(.requestNotFound, "log \(id) is not delivered yet (GET /v1/logs/\(id) says when it is)"))
        }
        let body = try context.store.bytes(of: media, in: 0..<upload.length)
        call.exchange.respond(HTTPResponse(status: 200, contentType: "text/plain; charset=utf-8", body: body))
    }
}
