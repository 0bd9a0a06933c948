import MajlisTransport

/// Which part of the server answers each HTTP request on the signaling port, first match
/// wins: uploads and media, the server API, `/metrics`, `/healthz`, the web app. Only uploads and the API read a body. A
/// request for a host the origin policy does not answer is refused first (403), one no part
/// answers is refused with 405.
struct HTTPRouteTable: Sendable {
    struct Route: Sendable {
        var name: String
        var matches: @Sendable (HTTPRequest) -> Bool
        /// Whether this part reads a request's body (else a body is refused unread).
        var takesBody: Bool
        var respond: @Sendable (HTTPExchange) -> Void
    }

    var routes: [Route]
    var origins: OriginPolicy

    /// The route for `request`, if any part answers it.
    func route(for request: HTTPRequest) -> Route? {
        routes.first { $0.matches(request) }
    }

    /// Hands the exchange to the part that answers it, or refuses it.
    func respond(_ exchange: HTTPExchange) {
        let request = exchange.request
        guard origins.answers(host: request.headers["host"]) else { return exchange.respond(Self.foreignHost) }
        guard let route = route(for: request) else { return exchange.respond(Self.getOnly) }
        route.respond(exchange)
    }

    /// Whether the body of `request` may be read (nil) or is refused unread with an answer: only
    /// a part that takes bodies reads one, and only once `readable` (its own check) lets it.
    func refuseBody(_ request: HTTPRequest, unless readable: (HTTPRequest) -> HTTPResponse?) -> HTTPResponse? {
        guard origins.answers(host: request.headers["host"]) else { return Self.foreignHost }
        guard route(for: request)?.takesBody == true else { return Self.getOnly }
        return readable(request)
    }

    private static let foreignHost = HTTPResponse(
        status: 403,
        body: Array(#"{"error":{"code":"forbidden","message":"a development server answers only on localhost or an IP address (Host)"}}"#.utf8))
    private static let getOnly = HTTPResponse(
        status: 405, body: Array(#"{"error":{"code":"unsupported","message":"only GET and HEAD are served here"}}"#.utf8), headers: ["Allow": "GET, HEAD"])

    /// Whether `request` is for a host the origin policy answers and a part that takes bodies.
    func takesBody(_ request: HTTPRequest) -> Bool {
        origins.answers(host: request.headers["host"]) && route(for: request)?.takesBody == true
    }

    static func isRead(_ request: HTTPRequest) -> Bool { request.method == "GET" || request.method == "HEAD" }
}
