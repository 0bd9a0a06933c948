import Foundation

/// A frame from the server as a client reads it: an answer to one of its requests (`re`, and the
/// data or the error) or an event (`ev`). The SDK's client and a node relaying a session to
/// another both read what a node sends through it, so neither depends on how the node's encoder
/// orders its keys.
public enum ServerFrame: Sendable, Equatable {
    case answer(re: Int64, Result<JSONValue, ProtocolError>)
    /// An event: its name and the whole frame (`EventFrame` decodes it).
    case event(name: String, JSONValue)

    /// Reads `frame`; nil for what is neither (not JSON, no `re` or `ev`).
    public init?(parsing frame: Data) {
        guard let value = try? JSONParser().parse(frame) else { return nil }
        self.init(value)
    }

    /// Reads a frame already parsed.
    public init?(_ value: JSONValue) {
        if let name = value["ev"]?.stringValue {
            self = .event(name: name, value)
            return
        }
        guard let re = value["re"]?.intValue else { return nil }
        if value["ok"] == true {
            self = .answer(re: re, .success(value["data"] ?? .object([:])))
            return
        }
        // A code this client does not know reads as `internal`: the message still says it.
        let error = value["error"]
        let code = ErrorCode(rawValue: error?["code"]?.stringValue ?? "") ?? .internal
        let host = error?["host"].flatMap { host in
            host["node"]?.stringValue.map { ProtocolError.Host(node: $0, signaling: host["signaling"]?.stringValue) }
        }
        self = .answer(re: re, .failure(ProtocolError(code, error?["message"]?.stringValue ?? "", host: host)))
    }
}
