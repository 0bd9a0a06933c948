/// A plain HTTP answer the WebSocket server gives to non-upgrade requests.
public struct HTTPResponse: Sendable {
    public var status: UInt32
    public var contentType: String
    public var body: [UInt8]

    public init(status: UInt32, contentType: String = "application/json", body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }
}
