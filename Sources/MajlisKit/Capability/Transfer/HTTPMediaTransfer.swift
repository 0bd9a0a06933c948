import Foundation
import MajlisProtocol

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `MediaTransfer` to a Majlis server by tus 1.0 over HTTP (docs/protocol.md section 18), on
/// the signaling port, with the user's access token. `server` and `token` are asked at each call,
/// so a renewed token or a move to another node of a cluster is followed.
public final class HTTPMediaTransfer: MediaTransfer {
    private let server: @Sendable () -> String
    private let token: @Sendable () -> String
    private let session: URLSession

    /// `server`: the signaling URL (`ws://host:port/v1/signal`, `wss://...`) or the server's
    /// `http(s)://host:port`; `token`: the user's access token.
    public init(server: @escaping @Sendable () -> String, token: @escaping @Sendable () -> String) {
        self.server = server
        self.token = token
        let configuration = URLSessionConfiguration.ephemeral
        // A PATCH of 256 KiB over a 100 kb/s link takes about 21 s; 60 s leaves room for worse
        // (a call that times out is tried again from the server's offset).
        configuration.timeoutIntervalForRequest = 60
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    /// The transfer of `signaling`'s user, to the node it is connected to.
    public convenience init(signaling: LiveSignalingClient) {
        self.init(server: { signaling.currentURL }, token: { signaling.currentToken })
    }

    /// `ws://host:port/v1/signal` → `http://host:port`.
    static func origin(_ url: String) -> String {
        var origin = url
        if origin.hasPrefix("ws://") { origin = "http://" + origin.dropFirst(5) }
        if origin.hasPrefix("wss://") { origin = "https://" + origin.dropFirst(6) }
        if let scheme = origin.range(of: "://"), let path = origin[scheme.upperBound...].firstIndex(of: "/") { origin = String(origin[..<path]) }
        return origin
    }

    public func create(length: Int64, type: String, filename: String?) async throws(MajlisError) -> String {
        var metadata = "filetype \(Data(type.utf8).base64EncodedString())"
        if let filename { metadata += ",filename \(Data(filename.utf8).base64EncodedString())" }
        let answer = try await call("POST", "/v1/uploads", headers: ["Upload-Length": String(length), "Upload-Metadata": metadata])
        guard answer.status == 201, let location = answer.header("Location"), let id = location.split(separator: "/").last else {
            throw Self.refusal(answer)
        }
        return String(id)
    }

    public func offset(of upload: String) async throws(MajlisError) -> Int64? {
        let answer = try await call("HEAD", "/v1/uploads/\(upload)")
        if answer.status == 404 { return nil }
        guard answer.status == 200, let offset = answer.header("Upload-Offset").flatMap({ Int64($0) }) else { throw Self.refusal(answer) }
        return offset
    }

    public func append(_ bytes: Data, to upload: String, at offset: Int64) async throws(MajlisError) -> Int64 {
        let answer = try await call(
            "PATCH", "/v1/uploads/\(upload)",
            headers: ["Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream"], body: bytes)
        guard answer.status == 204, let now = answer.header("Upload-Offset").flatMap({ Int64($0) }) else { throw Self.refusal(answer) }
        return now
    }

    public func download(_ media: String, range: Range<Int64>?) async throws(MajlisError) -> Data {
        var headers: [String: String] = [:]
        if let range { headers["Range"] = "bytes=\(range.lowerBound)-\(range.upperBound - 1)" }
        let answer = try await call("GET", "/v1/media/\(media)", headers: headers, tus: false)
        guard answer.status == (range == nil ? 200 : 206) else { throw Self.refusal(answer) }
        return answer.body
    }

    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: Data
        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    private func call(_ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil, tus: Bool = true) async throws(MajlisError) -> Answer {
        guard let url = URL(string: Self.origin(server()) + path) else { throw MajlisError.misuse("no server URL to send media to: \(server())") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("Bearer \(token())", forHTTPHeaderField: "Authorization")
        if tus { request.setValue("1.0.0", forHTTPHeaderField: "Tus-Resumable") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else { throw MajlisError.invalidResponse("\(method) \(path): not an HTTP answer") }
            var fields: [String: String] = [:]
            for (name, value) in http.allHeaderFields { fields[String(describing: name).lowercased()] = String(describing: value) }
            return Answer(status: http.statusCode, headers: fields, body: data)
        } catch let error as MajlisError {
            throw error
        } catch {
            throw MajlisError.unreachable("\(method) \(path): \(error.localizedDescription)")
        }
    }

    /// The server's refusal, from its `{"error": {"code", "message"}}` body when it has one.
    static func refusal(_ answer: Answer) -> MajlisError {
        struct Body: Decodable { var error: ProtocolError }
        if let body = try? JSONDecoder().decode(Body.self, from: answer.body) { return .server(body.error) }
        return .invalidResponse("HTTP \(answer.status)")
    }
}
