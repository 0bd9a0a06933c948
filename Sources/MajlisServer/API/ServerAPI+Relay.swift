import Foundation
import MajlisProtocol
import MajlisTransport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ServerAPI {
    /// Node-to-node calls: kept alive between calls, as the same few nodes are called again and again.
    static let relaySession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 16
        configuration.timeoutIntervalForRequest = 10
        return URLSession(configuration: configuration)
    }()

    /// Answers a failed call: one refused because another node of the cluster hosts its room
    /// (`conflict` naming it) is made again at that node, once, and that node's answer is given
    /// (so the API works from any node); otherwise, and when that node cannot be reached, the
    /// failure itself. A relayed call holds no thread while the other node works: the answer
    /// goes out from the HTTP client's completion.
    func respond(_ failure: APIFailure, to exchange: HTTPExchange) {
        let request = exchange.request
        guard failure.error.code == .conflict, let signaling = failure.error.host?.signaling, request.headers["majlis-forwarded"] == nil else {
            return exchange.respond(failure.response)
        }
        relay(request, to: signaling) { [context] answer in
            if answer == nil { context.logger.warning("api: \(request.method) \(request.path) could not be relayed to \(signaling)") }
            exchange.respond(answer ?? failure.response)
        }
    }

    /// What a path segment keeps as it is: RFC 3986's unreserved characters.
    static let segmentCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Makes `request` at the node whose signaling is at `signaling` (`ws://HOST:PORT/v1/signal`,
    /// or wss), marked `Majlis-Forwarded` so that node answers it itself; `done` gets its
    /// answer, or nil when it cannot be reached.
    private func relay(_ request: HTTPRequest, to signaling: String, done: @escaping @Sendable (HTTPResponse?) -> Void) {
        guard var components = URLComponents(string: signaling), let scheme = components.scheme, scheme == "ws" || scheme == "wss" else { return done(nil) }
        components.scheme = scheme == "wss" ? "https" : "http"
        components.path = ""
        // The path (decoded by the HTTP layer) encoded again, segment by segment, and the query
        // (encoded again by it); one that is no URL is not relayed.
        let path = request.path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.addingPercentEncoding(withAllowedCharacters: Self.segmentCharacters) ?? "" }.joined(separator: "/")
        guard let base = components.string, let url = URL(string: base + path + (request.query.isEmpty ? "" : "?" + request.query)) else { return done(nil) }
        var call = URLRequest(url: url)
        call.httpMethod = request.method
        for name in ["authorization", "content-type", "idempotency-key", "accept"] {
            if let value = request.headers[name] { call.setValue(value, forHTTPHeaderField: name) }
        }
        call.setValue(context.node.id, forHTTPHeaderField: "Majlis-Forwarded")
        if !request.body.isEmpty { call.httpBody = Data(request.body) }
        Self.relaySession.dataTask(with: call) { data, response, error in
            guard error == nil, let response = response as? HTTPURLResponse else { return done(nil) }
            var headers: [String: String] = [:]
            for name in ["Retry-After", "WWW-Authenticate", "Allow"] {
                if let value = response.value(forHTTPHeaderField: name) { headers[name] = value }
            }
            done(HTTPResponse(
                status: UInt32(response.statusCode), contentType: response.value(forHTTPHeaderField: "Content-Type") ?? "application/json",
                body: Array(data ?? Data()), headers: headers))
        }.resume()
    }
}
