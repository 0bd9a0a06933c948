import Foundation
import MajlisProtocol
import MajlisTransport

/// An API request that fails: the protocol's error (code and message) and its HTTP status.
struct APIFailure: Error {
    var error: ProtocolError
    var status: UInt32
    var headers: [String: String]

    init(_ error: ProtocolError, status: UInt32? = nil, headers: [String: String] = [:]) {
        // Field names are the body's or the query's: the decoder's `args.` prefix is the protocol's.
        self.error = ProtocolError(error.code, error.message.replacingOccurrences(of: "args.", with: ""), host: error.host)
        self.status = status ?? (RoomLeases.isUnplaceable(error) ? 503 : Self.status(of: error.code))
        self.headers = headers
        if self.status == 503 && headers["Retry-After"] == nil { self.headers["Retry-After"] = "1" }
        if self.status == 401 { self.headers["WWW-Authenticate"] = "Bearer" }
    }

    /// A node of a cluster still joining it (it has not read the registry yet).
    static let starting = APIFailure(
        ProtocolError(.internal, "this node is starting: it has not joined its cluster yet; try again in a moment"), status: 503,
        headers: ["Retry-After": "1"])

    static func notFound(_ path: String) -> APIFailure {
        APIFailure(ProtocolError(.unsupported, "no such API path: \(path)"), status: 404)
    }

    /// `{"error": {"code": ..., "message": ...}}`.
    var response: HTTPResponse {
        struct Body: Encodable { var error: ProtocolError }
        return HTTPResponse(status: status, body: Array(WireEncoder.encode(Body(error: error))), headers: headers)
    }

    /// The HTTP status for each protocol error code.
    static func status(of code: ErrorCode) -> UInt32 {
        switch code {
        case .badRequest: return 400
        case .unauthorized, .tokenExpired: return 401
        case .forbidden, .banned: return 403
        case .roomNotFound, .conversationNotFound, .messageNotFound, .notInRoom, .requestNotFound, .inviteNotFound, .seatOutOfRange: return 404
        case .unsupported: return 404
        case .roomExists, .roomFull, .seatOccupied, .seatLocked, .alreadySeated, .notSeated, .noFreeSeat, .approvalRequired,
            .alreadyRequested, .chatMuted, .conflict:
            return 409
        case .tooLarge: return 413
        case .rateLimited: return 429
        case .internal: return 500
        case .outcomeUnknown: return 503
        }
    }
}
