import MajlisProtocol

/// Everything that can go wrong in the SDK, as one typed error. The SDK never traps.
public enum MajlisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server refused the request (its code and message).
    case server(ProtocolError)
    /// No answer came in time, after every retry.
    case timedOut(op: String)
    /// There is no connection (and it is not coming back: closed, kicked, replaced, bad token).
    case notConnected
    /// The connection was closed for good, with the server's close code when it sent one.
    case closed(code: UInt16?, reason: String)
    /// The server answered with something this SDK cannot read.
    case invalidResponse(String)
    /// The SDK was used the wrong way (e.g. an intent before `join`).
    case misuse(String)
    /// A call outside the signaling connection (an upload, a download) did not reach the server
    /// or was cut: it can be tried again.
    case unreachable(String)

    /// The protocol error code, when the server refused.
    public var code: ErrorCode? {
        if case .server(let error) = self { return error.code }
        return nil
    }

    public var description: String {
        switch self {
        case .server(let error): return "\(error.code.rawValue): \(error.message)"
        case .timedOut(let op): return "no answer to \(op)"
        case .notConnected: return "not connected"
        case .closed(let code, let reason): return "connection closed (\(code.map(String.init) ?? "no code")): \(reason)"
        case .invalidResponse(let text): return "unreadable answer: \(text)"
        case .misuse(let text): return text
        case .unreachable(let text): return "the server could not be reached: \(text)"
        }
    }
}
