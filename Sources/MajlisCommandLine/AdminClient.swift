import CHTTPShim
import CWebSocketsShim
import Foundation
import MajlisProtocol

/// The server API's client for `majlis admin`: one request at a time, over http or https
/// (libcurl). An https server's certificate must verify against the system's authorities and
/// name the host, or be exactly the certificate the client was told to trust (`--trust-cert`,
/// a development server's self-signed one), as `majlis join` trusts one.
public struct AdminClient {
    public let server: String
    public let token: String
    /// The SHA-256 fingerprint of the one certificate trusted, if one is.
    private let pinned: [UInt8]?

    /// The longest answer read (a room's members at 2,000 a room fit many times over).
    static let answerLimit = 64 << 20

    public init(server: String, token: String, trusting certificateFile: String?) throws {
        guard !token.contains(where: { $0.isNewline }) else { throw Arguments.Failure(description: "the token holds a line break") }
        self.server = server
        self.token = token
        if let certificateFile {
            guard server.hasPrefix("https://") else { throw Arguments.Failure(description: "--trust-cert is for https:// servers") }
            var fingerprint = [UInt8](repeating: 0, count: 32)
            guard majlis_tls_certificate_fingerprint(certificateFile, &fingerprint) == 1 else {
                throw Arguments.Failure(description: "--trust-cert \(certificateFile): no PEM certificate could be read from it")
            }
            pinned = fingerprint
        } else {
            pinned = nil
        }
    }

    /// `method path` with `body` as JSON; the answer's JSON, or the server's error as a failure.
    public func call(_ method: String, _ path: String, body: JSONValue? = nil) throws -> JSONValue {
        if let body { return try send(method, path, payload: Array(try JSONEncoder().encode(body)), type: "application/json") }
        // Content-Length: 0, and no form type of libcurl's own.
        return try send(method, path, payload: method == "GET" ? nil : [], type: "")
    }

    /// `method path` with `bytes` as the body, of `type`; the answer's JSON, or the server's
    /// error as a failure.
    public func call(_ method: String, _ path: String, bytes: [UInt8], type: String) throws -> JSONValue {
        try send(method, path, payload: bytes, type: type)
    }

    /// `GET path`: the answer's bytes as they came (a delivered log's text), or the server's
    /// error as a failure.
    public func read(_ path: String) throws -> Data {
        let (status, data) = try exchange("GET", path, payload: nil, type: "")
        guard (200..<300).contains(status) else { throw Self.failure(status, data) }
        return data
    }

    private func send(_ method: String, _ path: String, payload: [UInt8]?, type: String) throws -> JSONValue {
        let (status, data) = try exchange(method, path, payload: payload, type: type)
        guard (200..<300).contains(status) else { throw Self.failure(status, data) }
        return (try? JSONDecoder().decode(JSONValue.self, from: data)) ?? .null
    }

    /// The server's error in an answer of `status`.
    private static func failure(_ status: Int, _ data: Data) -> Arguments.Failure {
        let value = (try? JSONDecoder().decode(JSONValue.self, from: data)) ?? .null
        let code = value["error"]?["code"]?.stringValue ?? "HTTP \(status)"
        return Arguments.Failure(description: "\(code): \(value["error"]?["message"]?.stringValue ?? "the server answered \(status)")")
    }

    private func exchange(_ method: String, _ path: String, payload: [UInt8]?, type: String) throws -> (status: Int, data: Data) {
        var headers = ["Authorization: Bearer \(token)", "Accept: application/json"]
        if payload != nil { headers.append("Content-Type:" + (type.isEmpty ? "" : " \(type)")) }
        var answer = majlis_http_answer()
        defer { majlis_http_answer_free(&answer) }
        // A NUL after the bytes, so an empty body still has an address to give.
        let length = payload?.count ?? 0
        let reached = ((payload ?? []) + [0]).withUnsafeBufferPointer { bytes in
            (pinned ?? []).withUnsafeBufferPointer { fingerprint in
                majlis_http_call(
                    method, server + path, headers.joined(separator: "\n"), payload == nil ? nil : bytes.baseAddress, length,
                    pinned == nil ? nil : fingerprint.baseAddress, payload.map { 30 + $0.count / 1_000_000 } ?? 30, Self.answerLimit, &answer)
            }
        }
        guard reached == 1 else {
            let reason = withUnsafeBytes(of: answer.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let hint = answer.verify_failed != 0 && pinned == nil ? "; a server's own certificate is trusted with --trust-cert FILE.pem" : ""
            throw Arguments.Failure(description: "cannot reach \(server): \(reason)\(hint)")
        }
        return (Int(answer.status), answer.body.map { Data(bytes: $0, count: answer.length) } ?? Data())
    }
}
