/// A plain HTTP answer the WebSocket server gives to non-upgrade requests.
public struct HTTPResponse: Sendable {
    public var status: UInt32
    public var contentType: String
    public var body: [UInt8]
    /// Further headers (`Allow`, `WWW-Authenticate`, `Retry-After`, ...).
    public var headers: [String: String]

    public init(status: UInt32, contentType: String = "application/json", body: [UInt8], headers: [String: String] = [:]) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }
}
