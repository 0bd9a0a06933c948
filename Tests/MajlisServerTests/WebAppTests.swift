import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import MajlisTransport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The web app's HTTP side: its files, nothing else from disk, and development tokens only in
/// development mode.
@Suite struct WebAppTests {
    static func get(_ server: TestServer, _ path: String) async throws -> (status: Int, type: String, body: Data) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.server.port)\(path)")!)
        let http = response as? HTTPURLResponse
        return (http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "Content-Type") ?? "", data)
    }

    @Test func theAppsFilesAndNothingElse() async throws {
        let server = try TestServer { $0.webDirectory = BrowserTests.web }
        defer { server.destroy() }
        let index = try await Self.get(server, "/?room=majlis")
        #expect(index.status == 200 && index.type.hasPrefix("text/html") && String(decoding: index.body, as: UTF8.self).contains("/app/main.js"))
        let script = try await Self.get(server, "/app/main.js")
        #expect(script.status == 200 && script.type.hasPrefix("text/javascript"))
        #expect(try await Self.get(server, "/app/style.css").type.hasPrefix("text/css"))
        for path in ["/app/../Package.swift", "/app/%2e%2e/README.md", "/app/nothing.js", "/app/main.swift", "/Package.swift", "/app/.hidden.js"] {
            #expect(try await Self.get(server, path).status == 404, "\(path)")
        }
        // Not in development mode: no tokens from the server.
        #expect(try await Self.get(server, "/v1/dev/token?name=x").status == 404)
    }

    @Test func developmentTokensCarryTheName() async throws {
        let server = try TestServer { $0.developmentKey = TestServer.key }
        defer { server.destroy() }
        let answer = try await Self.get(server, "/v1/dev/token?name=%D9%84%D9%8A%D9%84%D9%89%0A%1B%5B31m")
        #expect(answer.status == 200)
        let minted = try JSONDecoder().decode(JSONValue.self, from: answer.body)
        #expect(minted["name"] == "ليلى")
        let claims = try AccessToken.verify(try #require(minted["token"]?.stringValue), keys: [TestServer.key: server.secret], now: Int64(Date().timeIntervalSince1970))
        #expect(claims.sub == minted["user"]?.stringValue && claims.sub.hasPrefix("web-") && claims.grants?.publish == true)
        // Without a web directory there is no page.
        #expect(try await Self.get(server, "/").status == 404)
        // The token works: hello, create a room.
        let client = try await TestClient.connect(server.url)
        let hello = try await client.request("hello", ["token": try #require(minted["token"])])
        #expect(hello["data"]?["user"]?["name"] == "ليلى")
    }
}
