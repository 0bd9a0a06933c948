import Foundation
import MajlisProtocol

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(CHTTPShim)
import CHTTPShim
import CWebSocketsShim
#endif

/// A `MediaTransfer` to a Majlis server by tus 1.0 over HTTP (docs/protocol.md section 18), on
/// the signaling port, with the user's access token. `server` and `token` are asked at each call,
/// so a renewed token or a move to another node of a cluster is followed. With a
/// `trustedCertificate` (a development server's self-signed one, as the signaling client trusts
/// it) an https server must hold exactly that certificate: those calls go through libcurl, as
/// URLSession on Linux cannot be told to trust one certificate.
public final class HTTPMediaTransfer: MediaTransfer {
    private let server: @Sendable () -> String
    private let token: @Sendable () -> String
    private let session: URLSession
    /// The SHA-256 fingerprint of the one certificate trusted, if one is.
    private let pinned: [UInt8]?

    /// `server`: the signaling URL (`ws://host:port/v1/signal`, `wss://...`) or the server's
    /// `http(s)://host:port`; `token`: the user's access token; `trustedCertificate`: a PEM file
    /// (ignored where libcurl is not built in: then only the system's authorities vouch).
    public init(server: @escaping @Sendable () -> String, token: @escaping @Sendable () -> String, trustedCertificate: String? = nil) {
        self.server = server
        self.token = token
        var fingerprint: [UInt8]?
        #if canImport(CHTTPShim)
        if let trustedCertificate {
            var read = [UInt8](repeating: 0, count: 32)
            if majlis_tls_certificate_fingerprint(trustedCertificate, &read) == 1 { fingerprint = read }
        }
        #endif
        pinned = fingerprint
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
        self.init(server: { signaling.currentURL }, token: { signaling.currentToken }, trustedCertificate: signaling.options.trustedCertificate)
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
        #if canImport(CHTTPShim)
        if let pinned, url.scheme == "https" {
            var fields = headers
            fields["Authorization"] = "Bearer \(token())"
            if tus { fields["Tus-Resumable"] = "1.0.0" }
            // No "Expect: 100-continue" before a piece: the server reads it as it comes.
            fields["Expect"] = ""
            return try await Self.pinnedCall(method, url.absoluteString, headers: fields, body: body, pinned: pinned)
        }
        #endif
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

    #if canImport(CHTTPShim)
    /// One call through libcurl trusting only the certificate `pinned` names, on a thread of its
    /// own (it blocks until the answer or its timeout).
    private static func pinnedCall(_ method: String, _ url: String, headers: [String: String], body: Data?, pinned: [UInt8]) async throws(MajlisError) -> Answer {
        // "Name:" with nothing after it: libcurl sends no such header.
        let lines = headers.map { $0.value.isEmpty ? "\($0.key):" : "\($0.key): \($0.value)" }.joined(separator: "\n")
        let result: Result<Answer, MajlisError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var answer = majlis_http_answer()
                defer { majlis_http_answer_free(&answer) }
                // A NUL after the bytes, so an empty body still has an address to give.
                let bytes = [UInt8](body ?? Data()) + [0]
                let reached = bytes.withUnsafeBufferPointer { payload in
                    pinned.withUnsafeBufferPointer { fingerprint in
                        majlis_http_call(method, url, lines, body == nil ? nil : payload.baseAddress, body?.count ?? 0, fingerprint.baseAddress, 60, 64 << 20, &answer)
                    }
                }
                guard reached == 1 else {
                    let reason = withUnsafeBytes(of: answer.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                    continuation.resume(returning: .failure(.unreachable("\(method) \(url): \(reason)")))
                    return
                }
                var fields: [String: String] = [:]
                let text = answer.headers.map { String(cString: $0) } ?? ""
                for line in text.components(separatedBy: "\r\n") {
                    if line.hasPrefix("HTTP/") { fields = [:] }  // the final answer's, not a 100's
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let data = answer.body.map { Data(bytes: $0, count: answer.length) } ?? Data()
                continuation.resume(returning: .success(Answer(status: Int(answer.status), headers: fields, body: data)))
            }
        }
        return try result.get()
    }
    #endif

    /// The server's refusal, from its `{"error": {"code", "message"}}` body when it has one.
    static func refusal(_ answer: Answer) -> MajlisError {
        struct Body: Decodable { var error: ProtocolError }
        if let body = try? JSONDecoder().decode(Body.self, from: answer.body) { return .server(body.error) }
        return .invalidResponse("HTTP \(answer.status)")
    }
}
