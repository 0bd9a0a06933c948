/// A pending request to speak, as the host's list shows it.
public struct RequestRow: Sendable, Equatable {
    public var requestId: String
    public var userId: String
    public var text: String

    public init(requestId: String, userId: String, text: String) {
        self.requestId = requestId
        self.userId = userId
        self.text = text
    }
}
