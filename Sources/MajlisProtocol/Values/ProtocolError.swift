/// An error as it travels in a response: a code from the protocol and a message for people.
public struct ProtocolError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    /// The machine-readable code.
    public var code: ErrorCode
    /// A human-readable explanation, e.g. "seat 3 is taken by u9".
    public var message: String

    /// Makes an error with a code and a message.
    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
