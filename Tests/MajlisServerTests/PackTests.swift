import Foundation
import MajlisPacks
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Resource packs over HTTP (docs/protocol.md section 19): uploaded by the app's backend,
/// listed and served to anyone, immutable by name, with ranges; refused with the reason.
@Suite struct PackTests {
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var json: JSONValue { (try? JSONDecoder().decode(JSONValue.self, from: Data(body))) ?? .null }
    }

    static func call(_ server: TestServer, _ method: String, _ path: String, body: [UInt8]? = nil, token: String? = nil, headers: [String: String] = [:]) async throws -> Answer {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.server.port)\(path)")!)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = Data(body)
            request.setValue("application/zip", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields[String(describing: name).lowercased()] = String(describing: value) }
        return Answer(status: http.statusCode, headers: fields, body: Array(data))
    }

    /// The status of a GET with `If-None-Match` (over a raw socket: URLSession keeps 304s to itself).
    static func status(_ server: TestServer, _ path: String, ifNoneMatch tag: String) async throws -> Int? {
        let port = server.server.port
        let answer = try await offPool {
            Result { try RawHTTP.exchange(port: port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: \"\(tag)\"\r\nConnection: close\r\n\r\n") }
        }.get()
        return RawHTTP.statuses(answer).first
    }

    @Test func theBackendUploadsPacksThatAnyoneListsAndFetches() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let admin = ServerAPITests.adminToken(server)
        // A 5 MB pack: its sound is 5 MB of noise, stored.
        var noisy = PackArchives.files()
        noisy[2].1 = Array(randomBytes(5 << 20))
        let files = noisy
        let bytes = try await offPool { try PackArchives.zip(files, deflated: false) }
        let sha = ResourcePack.sha256(bytes)

        #expect(try await Self.call(server, "POST", "/v1/packs", body: bytes).status == 401)
        #expect(try await Self.call(server, "POST", "/v1/packs", body: bytes, token: server.token("huda")).status == 403)
        let made = try await Self.call(server, "POST", "/v1/packs", body: bytes, token: admin)
        #expect(made.status == 201, "\(made.json)")
        #expect(made.json["pack"]?["sha256"] == .string(sha) && made.json["pack"]?["url"] == .string("/v1/packs/\(sha)"), "\(made.json)")
        #expect(made.json["pack"]?["items"]?.arrayValue?.count == 3 && made.json["pack"]?["kind"] == "emoji")
        #expect(try await Self.call(server, "POST", "/v1/packs", body: bytes, token: admin).status == 200, "the same pack again")

        // Listed for anyone, with a version that says when it changed.
        let listed = try await Self.call(server, "GET", "/v1/packs")
        #expect(listed.status == 200 && listed.json["packs"]?.arrayValue?.map { $0["sha256"] } == [.string(sha)], "\(listed.json)")
        let version = try #require(listed.json["version"]?.stringValue)
        #expect(try await Self.status(server, "/v1/packs", ifNoneMatch: version) == 304)

        // Fetched whole or by range, immutable by name.
        let fetched = try await Self.call(server, "GET", "/v1/packs/\(sha)")
        #expect(fetched.status == 200 && fetched.body == bytes && ResourcePack.sha256(fetched.body) == sha)
        #expect(fetched.headers["cache-control"] == "public, max-age=31536000, immutable" && fetched.headers["etag"] == "\"\(sha)\"")
        let part = try await Self.call(server, "GET", "/v1/packs/\(sha)", headers: ["Range": "bytes=1000-1999"])
        #expect(part.status == 206 && part.body == Array(bytes[1000..<2000]) && part.headers["content-range"] == "bytes 1000-1999/\(bytes.count)")
        #expect(try await Self.call(server, "GET", "/v1/packs/\(sha)", headers: ["Range": "bytes=\(bytes.count)-"]).status == 416)
        #expect(try await Self.status(server, "/v1/packs/\(sha)", ifNoneMatch: sha) == 304)
        #expect(try await Self.call(server, "GET", "/v1/packs/\(String(repeating: "0", count: 64))").status == 404)

        // A new version replaces it in the catalogue; the old one is still served.
        var changed = PackArchives.files()
        changed[1].1[0] = 7
        let newer = try PackArchives.zip(changed)
        #expect(try await Self.call(server, "POST", "/v1/packs", body: newer, token: admin).status == 201)
        let relisted = try await Self.call(server, "GET", "/v1/packs")
        #expect(relisted.json["packs"]?.arrayValue?.map { $0["sha256"] } == [.string(ResourcePack.sha256(newer))] && relisted.json["version"] != .string(version))
        #expect(try await Self.call(server, "GET", "/v1/packs/\(sha)").body == bytes)

        // Retired: out of the catalogue, still served.
        #expect(try await Self.call(server, "DELETE", "/v1/packs/classic").status == 401)
        #expect(try await Self.call(server, "DELETE", "/v1/packs/classic", token: admin).status == 204)
        #expect(try await Self.call(server, "DELETE", "/v1/packs/classic", token: admin).status == 404)
        #expect(try await Self.call(server, "GET", "/v1/packs").json["packs"] == .array([]))
        #expect(try await Self.call(server, "GET", "/v1/packs/\(ResourcePack.sha256(newer))").status == 200)
    }

    @Test func packsThatBreakARuleAreRefusedWithTheReason() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let admin = ServerAPITests.adminToken(server)
        let broken = try PackArchives.zip(PackArchives.files(#"{"id": "x", "kind": "gift", "names": {"en": "X"}, "items": [{"id": "a", "format": "webp", "animation": "gone.webp"}]}"#))
        let refused = try await Self.call(server, "POST", "/v1/packs", body: broken, token: admin)
        #expect(refused.status == 400 && refused.json["error"]?["message"]?.stringValue?.contains("gone.webp is not in the pack") == true, "\(refused.json)")
        let garbage = try await Self.call(server, "POST", "/v1/packs", body: Array("not a zip".utf8), token: admin)
        #expect(garbage.status == 400 && garbage.json["error"]?["message"]?.stringValue?.contains("not a zip archive") == true, "\(garbage.json)")
        let roomAdmin = ServerAPITests.adminToken(server, room: "salon")
        #expect(try await Self.call(server, "POST", "/v1/packs", body: broken, token: roomAdmin).status == 403)
        #expect(try await Self.call(server, "PUT", "/v1/packs", body: broken, token: admin).status == 405)
        #expect(try await Self.call(server, "GET", "/v1/packs").json["packs"] == .array([]))
    }
}
