import Dispatch
import Foundation
import MajlisProtocol
import MajlisRoom
import MajlisTransport

/// The server API for the app's backend: JSON over HTTP under `/v1/rooms`, described by
/// `docs/openapi.yaml` (served at `/v1/openapi.yaml`).
///
/// Every request carries `Authorization: Bearer <JWT>` signed with one of the server's keys and
/// granting `admin`: for every room (no `room` claim, or `*`), or for the one room it names.
/// A change becomes the protocol op a member would send (validated by the same decoder), applied
/// on the room's executor as an operator who is not a member: race-free, with the same events.
/// An `Idempotency-Key` header makes a repeated change answer as the first did.
///
/// Threads: requests are handled on the API's own queue (store reads included), never on the
/// service thread; answers come from there or from the room's queue.
final class ServerAPI: Sendable {
    let context: ServerContext
    /// Where conversations' changes are carried out, in order with members' ops.
    let messagingRequests: MessagingRequests
    private let queue = DispatchQueue(label: "majlis.api", attributes: .concurrent)

    init(context: ServerContext, messaging: MessagingRequests) {
        self.context = context
        messagingRequests = messaging
    }

    /// Whether `path` belongs to the API.
    static func owns(_ path: String) -> Bool {
        path == "/v1/rooms" || path.hasPrefix("/v1/rooms/") || path == "/v1/conversations" || path.hasPrefix("/v1/conversations/")
            || path.hasPrefix("/v1/users/") || path == "/v1/held-messages" || path.hasPrefix("/v1/logs/") || path.hasPrefix("/v1/held-messages/") || path.hasPrefix("/v1/webhooks/") || path == "/v1/nodes" || path.hasPrefix("/v1/nodes/") || path == "/v1/openapi.yaml"
    }

    /// Handles one request; answers through the exchange.
    func handle(_ exchange: HTTPExchange) {
        context.metrics.count(.apiRequests)
        queue.async { [self] in
            let request = exchange.request
            do {
                if request.path == "/v1/openapi.yaml" {
                    exchange.respond(try document(request))
                    return
                }
                let segments = try Self.segments(request.path)
                let (route, parameters) = try Self.match(request.method, segments)
                let claims = try authorize(request, room: parameters.room)
                let call = APICall(
                    request: request, parameters: parameters, claims: claims, exchange: exchange,
                    bodyFields: Self.bodyFields["\(route.method) \(route.pattern.joined(separator: "/"))"])
                try call.refuseRepeatedQueryArguments()
                try route.handler(self, call)
            } catch let failure as APIFailure {
                respond(failure, to: exchange)
            } catch let error as ProtocolError {
                respond(APIFailure(error), to: exchange)
            } catch {
                context.logger.error("api: \(request.method) \(request.path): \(error)")
                exchange.respond(APIFailure(ProtocolError(.internal, "the server could not complete the request")).response)
            }
        }
    }

    /// Why a request's body will not be read, from its headers alone (no such route, or a token
    /// that may not make the call), or nil: the body is read and the request handled.
    func refusal(_ request: HTTPRequest) -> HTTPResponse? {
        do {
            if request.path == "/v1/openapi.yaml" { return try document(request) }
            let segments = try Self.segments(request.path)
            let (_, parameters) = try Self.match(request.method, segments)
            _ = try authorize(request, room: parameters.room)
            return nil
        } catch let failure as APIFailure {
            return failure.response
        } catch let error as ProtocolError {
            return APIFailure(error).response
        } catch {
            return APIFailure(ProtocolError(.badRequest, "the request cannot be served")).response
        }
    }

    // MARK: Authorization

    /// The token's claims when it may act on `room` (or on the whole server when nil).
    private func authorize(_ request: HTTPRequest, room: String?) throws -> AccessClaims {
        guard let header = request.headers["authorization"], header.lowercased().hasPrefix("bearer ") else {
            throw APIFailure(ProtocolError(.unauthorized, "send Authorization: Bearer <token> (a JWT with the admin grant)"))
        }
        let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
        let claims = try AccessToken.verify(token, keys: context.config.keys, now: context.now() / 1000)
        guard claims.effectiveGrants.admin else { throw APIFailure(ProtocolError(.forbidden, "the token does not grant admin")) }
        if let scope = claims.room, scope != "*" {
            guard let room, room == scope else {
                throw APIFailure(ProtocolError(.forbidden, "the token is for room \(scope) only"))
            }
        }
        return claims
    }

    // MARK: Routing

    /// The path's segments after `/v1`. The HTTP layer has percent-decoded the path once, as it
    /// must be (`%25` is `%`): decoded again, a key holding `%` could never be named.
    private static func segments(_ path: String) throws -> [String] {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard parts.first == "v1" else { throw APIFailure.notFound(path) }
        return parts.dropFirst().map(String.init)
    }

    private static func match(_ method: String, _ segments: [String]) throws -> (APIRoute, APIParameters) {
        var allowed: [String] = []
        for route in APIRoute.all {
            guard let parameters = route.match(segments) else { continue }
            if route.method == method { return (route, parameters) }
            allowed.append(route.method)
        }
        guard allowed.isEmpty else {
            throw APIFailure(
                ProtocolError(.unsupported, "\(method) is not allowed here (allowed: \(allowed.joined(separator: ", ")))"),
                status: 405, headers: ["Allow": allowed.joined(separator: ", ")])
        }
        throw APIFailure.notFound("/v1/" + segments.joined(separator: "/"))
    }

    private func document(_ request: HTTPRequest) throws -> HTTPResponse {
        guard request.method == "GET" else {
            throw APIFailure(ProtocolError(.unsupported, "\(request.method) is not allowed here (allowed: GET)"), status: 405, headers: ["Allow": "GET"])
        }
        let data = context.config.apiDocument.map { FileManager.default.contents(atPath: $0).map(Array.init) } ?? WebApp.builtIn("docs/openapi.yaml")
        guard let data else { throw APIFailure.notFound(request.path) }
        return HTTPResponse(status: 200, contentType: "application/yaml; charset=utf-8", body: data)
    }

    // MARK: Carrying out

    /// The room `id`, loaded if need be; `room_not_found` when there is none.
    func host(_ id: String) throws -> RoomHost {
        guard Identifier.isValid(id) else { throw APIFailure(ProtocolError(.roomNotFound, "no room \(id)")) }
        guard let host = try context.rooms.host(id, context: context) else { throw APIFailure(ProtocolError(.roomNotFound, "no room \(id)")) }
        return host
    }

    /// Runs protocol op `op` with `args` on the call's room as the operator (or as `caller`),
    /// and answers with the op's data (`shape` may rework it).
    func run(
        _ call: APICall, op: String, args: [String: JSONValue], caller: Caller? = nil,
        shape: (@Sendable (Data) -> HTTPResponse)? = nil
    ) throws {
        let room = call.parameters.room ?? ""
        var full = args
        full["room"] = .string(room)
        let command: RoomCommand
        switch RequestDecoder.roomCommand(op: op, args: full) {
        case .success(let decoded): command = decoded
        case .failure(let error): throw APIFailure(error)
        }
        let host = try host(room)
        let exchange = call.exchange
        let rid = call.request.headers["idempotency-key"]
        if let rid, rid.isEmpty || rid.count > 64 {
            throw APIFailure(ProtocolError(.badRequest, "Idempotency-Key must be 1 to 64 characters"))
        }
        // A key is the calling token's (its subject and the room it is for), per room and op.
        let owner = "api:\(call.claims.sub):\(call.claims.room ?? "*")"
        host.perform(command, op: op, caller: caller ?? call.operatorCaller, rid: rid, ridOwner: owner) { ok, body in
            if ok {
                exchange.respond(shape?(body) ?? HTTPResponse(status: 200, body: Array(body)))
            } else {
                let error = (try? JSONDecoder().decode(ProtocolError.self, from: body)) ?? ProtocolError(.internal, "the request failed")
                exchange.respond(APIFailure(error).response)
            }
        }
    }

    /// Reads the call's room on its executor and answers with what `body` makes of it.
    func read<T: Encodable & Sendable>(_ call: APICall, _ body: @escaping @Sendable (RoomEngine, Int64) throws(ProtocolError) -> T) throws {
        let host = try host(call.parameters.room ?? "")
        let exchange = call.exchange
        host.read({ engine, now -> Result<T, ProtocolError> in
            do throws(ProtocolError) { return .success(try body(engine, now)) } catch { return .failure(error) }
        }) { result in
            switch result.flatMap({ $0 }) {
            case .success(let value): exchange.respond(HTTPResponse(status: 200, body: Array(WireEncoder.encode(value))))
            case .failure(let error): exchange.respond(APIFailure(error).response)
            }
        }
    }
}
