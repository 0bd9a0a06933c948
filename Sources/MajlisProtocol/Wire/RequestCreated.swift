/// The answer to `request.create`.
public struct RequestCreated: Sendable, Codable, Equatable {
    public var requestId: String

    public init(requestId: String) { self.requestId = requestId }
}
