import Foundation
import MajlisProtocol
import MajlisTransport

/// The web app's HTTP side: its static files (built into the binary from the source tree's `Web`
/// folder, or read from `ServerConfig.webDirectory` when one is given, as edited, no build step)
/// and, in development mode, `GET /v1/dev/token?name=NAME[&user=ID]`, which mints a token for a
/// new user (or the one the page was given before) with that display name so the page can join without an app backend (with `&admin=1`, one that
/// grants admin for every room, for the operator console at `/console`).
struct WebApp: Sendable {
    let directory: String?
    /// The development key and its secret; nil outside development mode.
    let development: (key: String, secret: String)?
    /// The app's token URL (`--token-url`) and the origins that may embed the pages (`--allow-origin`).
    let tokenURL: String?
    let embedOrigins: [String]
    /// The app's token URL's origin, which the pages may connect to.
    let tokenOrigin: String?

    init(config: ServerConfig) {
        directory = config.webDirectory
        development = config.developmentKey.flatMap { key in config.keys[key].map { (key, $0) } }
        tokenURL = config.tokenURL
        embedOrigins = config.allowedOrigins
        tokenOrigin = Self.origin(of: config.tokenURL)
    }

    /// A file of the web app (a path under `Web/`): from the directory given, else built in.
    func contents(_ file: String) -> [UInt8]? {
        if let directory { return FileManager.default.contents(atPath: (directory as NSString).appendingPathComponent(file)).map(Array.init) }
        return Self.builtIn("Web/" + file)
    }

    /// A file of the source tree built into the binary (`Web/...`, `docs/openapi.yaml`).
    static func builtIn(_ path: String) -> [UInt8]? {
        EmbeddedFiles.base64[path].flatMap { Data(base64Encoded: $0) }.map(Array.init)
    }

    static let contentTypes = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml", "json": "application/json",
    ]

    /// The answer for `path` (without its query), or nil when it is not the web app's; `peers`:
    /// the signaling addresses of the cluster's live nodes, which a page may go on at.
    func respond(path: String, query: [String: String], peers: [String] = []) -> HTTPResponse? {
        if path == "/v1/dev/token" { return token(name: query["name"] ?? "", user: query["user"], admin: query["admin"] == "1") }
        if path == "/v1/web/config" { return webConfig() }
        let file: String
        if path == "/" || path == "/index.html" {
            file = "index.html"
        } else if path == "/console" {
            file = "console.html"
        } else if path == "/messages" {
            file = "messages.html"
        } else if path == "/favicon.ico" || path == "/favicon.svg" {
            file = "app/icon.svg"
        } else if path.hasPrefix("/app/"), Self.isPlainName(path.dropFirst(5)) {
            file = "app/" + path.dropFirst(5)
        } else {
            return nil
        }
        let type = Self.contentTypes[String(file.split(separator: ".").last ?? "")] ?? "application/octet-stream"
        guard let data = contents(file) else {
            return HTTPResponse(status: 404, contentType: "text/plain; charset=utf-8", body: Array("not found\n".utf8))
        }
        // A page that may be embedded drops X-Frame-Options (frame-ancestors names who may).
        let policy = Self.pagePolicy(connectTo: (tokenOrigin.map { [$0] } ?? []) + peers.compactMap(OriginPolicy.connectSource(ofSignaling:)), embedders: embedOrigins)
        let headers = file.hasSuffix(".html") ? ["Content-Security-Policy": policy, "X-Frame-Options": embedOrigins.isEmpty ? "DENY" : ""] : [:]
        return HTTPResponse(status: 200, contentType: type, body: data, headers: headers)
    }

    /// What the pages may load and do: their own scripts and styles only (no inline script),
    /// connections to this server and to `connectTo` only (the app's token URL, the cluster's
    /// other nodes), framed only by the origins of `--allow-origin`; images and sound also from
    /// `blob:` (media messages' files, read with the user's token).
    static func pagePolicy(connectTo: [String] = [], embedders: [String] = []) -> String {
        let ancestors = embedders.isEmpty ? "'none'" : embedders.joined(separator: " ")
        var connect = ["'self'"]
        for source in connectTo where !connect.contains(source) { connect.append(source) }
        return [
            "default-src 'self'", "script-src 'self'", "style-src 'self'", "style-src-attr 'unsafe-inline'", "img-src 'self' data: blob:",
            "media-src 'self' blob:", "connect-src " + connect.joined(separator: " "), "frame-ancestors \(ancestors)",
            "base-uri 'none'", "form-action 'self'", "object-src 'none'",
        ].joined(separator: "; ")
    }

    /// `scheme://host[:port]` of a URL, or nil.
    static func origin(of url: String?) -> String? {
        url.flatMap(URL.init(string:)).flatMap { url -> String? in
            guard let scheme = url.scheme, let host = url.host else { return nil }
            return "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
        }
    }

    /// What the page needs to know to sign in: development mode, the app's token URL, and who may
    /// embed it and post it a token.
    private func webConfig() -> HTTPResponse {
        struct Config: Encodable {
            var development: Bool
            var tokenUrl: String?
            var embedOrigins: [String]
        }
        return HTTPResponse(status: 200, body: Array(WireEncoder.encode(Config(development: development != nil, tokenUrl: tokenURL, embedOrigins: embedOrigins))))
    }

    /// A file name of letters, digits and dashes with one known extension: nothing else is served.
    static func isPlainName(_ name: Substring) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && contentTypes[String(parts[1])] != nil && !parts[0].isEmpty
            && parts[0].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
    }

    /// A token for `user` (a page asks again for the id it was given, so a reload is the same
    /// member), or for a new user when none is given.
    private func token(name: String, user asked: String?, admin: Bool) -> HTTPResponse {
        guard let development else {
            return HTTPResponse(status: 404, body: Array(#"{"error":"tokens are minted by the app's backend on this server (not in development mode)"}"#.utf8))
        }
        if let asked, !Identifier.isValid(asked) {
            return HTTPResponse(status: 400, body: Array(#"{"error":"user must be 1 to 64 characters of A-Z a-z 0-9 _ . @ -"}"#.utf8))
        }
        let user = asked ?? "web-" + HMACSHA256.randomBytes(5).map { String(format: "%02x", $0) }.joined()
        let cleaned = DisplayName.clean(name)
        let display = cleaned.isEmpty ? user : cleaned
        let now = SystemClock().now() / 1000
        let claims = AccessClaims(
            sub: user, name: display, exp: now + 86_400, iat: now, grants: Grants(join: true, create: true, admin: admin, publish: true, chat: true))
        struct Minted: Encodable {
            var token: String
            var user: String
            var name: String
        }
        return HTTPResponse(status: 200, body: Array(WireEncoder.encode(Minted(token: AccessToken.sign(claims, key: development.key, secret: development.secret), user: user, name: display))))
    }

    /// `a=1&b=x%20y` as a dictionary (percent-decoded, `+` as space).
    static func query(_ text: Substring) -> [String: String] {
        Dictionary(queryPairs(text)) { _, last in last }
    }

    /// `a=1&b=x%20y` as its name and value pairs, in order (repeats kept).
    static func queryPairs(_ text: Substring) -> [(String, String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (part: Substring) in String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part) }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}
