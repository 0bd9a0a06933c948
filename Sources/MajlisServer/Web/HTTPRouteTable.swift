import MajlisTransport

/// Which part of the server answers each HTTP request on the signaling port, first match
/// wins: the server API, `/metrics`, `/healthz`, the web app. Only the API reads a body.
struct HTTPRouteTable: Sendable {
    struct Route: Sendable {
        var name: String
        var matches: @Sendable (HTTPRequest) -> Bool
        /// Whether this part reads a request's body (else a body is refused unread).
        var takesBody: Bool
        var respond: @Sendable (HTTPExchange) -> Void
    }

    var routes: [Route]

    /// The route for `request`, if any part answers it.
    func route(for request: HTTPRequest) -> Route? {
        routes.first { $0.matches(request) }
    }

    static func isRead(_ request: HTTPRequest) -> Bool { request.method == "GET" || request.method == "HEAD" }
}
