/// An error as it travels in a response: a code from the protocol and a message for people.
public struct ProtocolError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    /// The machine-readable code.
    public var code: ErrorCode
    /// A human-readable explanation, e.g. "seat 3 is taken by u9".
    public var message: String
    /// For `conflict` on a room another node of a cluster hosts: that node, and where its
    /// signaling is (when it said).
    public var host: Host?

    /// A node of a cluster, as an error names it.
    public struct Host: Sendable, Equatable, Codable {
        public var node: String
        public var signaling: String?

        public init(node: String, signaling: String?) {
            self.node = node
            self.signaling = signaling
        }
    }

    /// Makes an error with a code and a message.
    public init(_ code: ErrorCode, _ message: String, host: Host? = nil) {
        self.code = code
        self.message = message
        self.host = host
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
