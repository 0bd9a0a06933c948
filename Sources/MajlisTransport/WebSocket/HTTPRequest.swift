/// One HTTP request the server received (not a WebSocket upgrade), body included.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, `PUT`, `PATCH`, `DELETE`, `OPTIONS` or `HEAD`.
    public var method: String
    /// The path, without the query, percent-decoded (once).
    public var path: String
    /// The query string without the `?`: its arguments joined with `&`, each name and value
    /// percent-encoded (decode each once for what was sent; `+` was sent as a space).
    public var query: String
    /// The headers the server reads, by lower-case name: `authorization`, `content-type`,
    /// `idempotency-key`, `accept`, `host`, `origin`, the `majlis-*` headers of webhooks, and
    /// `majlis-forwarded` (an API call one node of a cluster relays to another).
    public var headers: [String: String]
    public var body: [UInt8]
    /// The peer's address.
    public var peer: String

    public init(method: String, path: String, query: String = "", headers: [String: String] = [:], body: [UInt8] = [], peer: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.peer = peer
    }

    /// The headers copied from each request (anything else is not kept).
    static let keptHeaders = [
        "authorization", "content-type", "idempotency-key", "accept", "majlis-signature", "majlis-event-id", "majlis-key", "majlis-forwarded", "host",
        "origin", "range", "if-none-match", "tus-resumable", "upload-length", "upload-offset", "upload-metadata",
    ]
}
