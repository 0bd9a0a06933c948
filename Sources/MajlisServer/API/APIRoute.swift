import Foundation
import MajlisProtocol
import MajlisRoom
import MajlisTransport

/// What a matched path named: the room and the other `{...}` parts.
struct APIParameters: Sendable {
    var room: String?
    var values: [String: String] = [:]

    subscript(_ name: String) -> String { values[name] ?? "" }
}

/// One request being served: what it asked, who asks, and where the answer goes.
struct APICall: Sendable {
    var request: HTTPRequest
    var parameters: APIParameters
    var claims: AccessClaims
    var exchange: HTTPExchange
    /// The fields the body may have (none given: any the op reads).
    var bodyFields: Set<String>?

    /// The backend as an operator of the room: the token's subject with its grants, no member.
    var operatorCaller: Caller {
        Caller(id: claims.sub, name: DisplayName.clean(claims.name ?? claims.sub), grants: claims.effectiveGrants, isOperator: true)
    }

    /// The JSON object of the body (an empty body is an empty object).
    func body() throws -> [String: JSONValue] {
        if request.body.isEmpty { return [:] }
        if let type = request.headers["content-type"], !type.lowercased().hasPrefix("application/json") {
            throw APIFailure(ProtocolError(.badRequest, "the body must be JSON (Content-Type: application/json)"), status: 415)
        }
        let value: JSONValue
        do {
            value = try JSONParser(maxValues: JSONParser.maxRequestValues).parse(request.body)
        } catch {
            throw APIFailure(ProtocolError(.badRequest, "the body must be one JSON object (\(error))"))
        }
        guard case .object(let fields) = value else {
            throw APIFailure(ProtocolError(.badRequest, "the body must be one JSON object"))
        }
        if let allowed = bodyFields, let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw APIFailure(ProtocolError(.badRequest, "\(unknown) is not a field here (\(allowed.sorted().joined(separator: ", ")))"))
        }
        // A field not given is left out: null is no value of any field here.
        if let field = fields.first(where: { $0.value == .null && $0.key != "payload" })?.key {
            throw APIFailure(ProtocolError(.badRequest, "\(field) must not be null (leave it out instead)"))
        }
        return fields
    }

    /// The query's arguments, percent-decoded.
    var query: [String: String] { WebApp.query(Substring(request.query)) }

    /// Each query argument at most once: `limit=1&limit=500` is no request of this API.
    func refuseRepeatedQueryArguments() throws {
        var seen: Set<String> = []
        for (name, _) in WebApp.queryPairs(Substring(request.query)) where !seen.insert(name).inserted {
            throw APIFailure(ProtocolError(.badRequest, "\(name) is given more than once"))
        }
    }

    /// A query argument that must be a room or user id, if given (empty: not given).
    func queryId(_ name: String) throws -> String? {
        guard let text = query[name], !text.isEmpty else { return nil }
        guard Identifier.isValid(text) else {
            throw APIFailure(ProtocolError(.badRequest, "\(name) must be an id of 1 to 64 characters of A-Z a-z 0-9 _ . @ -"))
        }
        return text
    }

    /// A query argument that must be an integer in `range`, if given.
    func queryInt(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = query[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw APIFailure(ProtocolError(.badRequest, "\(name) must be an integer in \(range.lowerBound)...\(range.upperBound)"))
        }
        return value
    }

    /// The seat index in the path.
    func seatIndex() throws -> Int {
        guard let index = Int(parameters["index"]), index >= 0 else {
            throw APIFailure(ProtocolError(.badRequest, "the seat index must be a whole number from 0"))
        }
        return index
    }
}

/// One operation of the API: method, path pattern (`{room}` and other `{name}` parts) and what
/// carries it out.
struct APIRoute: Sendable {
    typealias Handler = @Sendable (ServerAPI, APICall) throws -> Void

    var method: String
    var pattern: [String]
    var handler: Handler

    init(_ method: String, _ path: String, _ handler: @escaping Handler) {
        self.method = method
        self.pattern = path.split(separator: "/").map(String.init)
        self.handler = handler
    }

    /// The parameters when `segments` fit the pattern.
    func match(_ segments: [String]) -> APIParameters? {
        guard segments.count == pattern.count else { return nil }
        var parameters = APIParameters()
        for (part, segment) in zip(pattern, segments) {
            if part.hasPrefix("{") {
                guard !segment.isEmpty else { return nil }
                let name = String(part.dropFirst().dropLast())
                if name == "room" { parameters.room = segment } else { parameters.values[name] = segment }
            } else if part != segment {
                return nil
            }
        }
        return parameters
    }
}
