import Foundation
import MajlisProtocol
@testable import MajlisServer
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

    /// On a node of a cluster, pages of the other live nodes may open WebSockets here, and this
    /// node's pages may connect there (so a page whose node died goes on elsewhere); nothing else
    /// changes: another origin, or a peer's address that is not a WebSocket one, is still refused.
    @Test func aNodeTakesThePagesOfItsPeers() {
        let peers = ["ws://10.0.0.2:8082/v1/signal", "wss://Node3.Example.com/v1/signal", "http://10.0.0.9:1/v1/signal"]
        let policy = OriginPolicy(allowed: [], developmentMode: false, peers: { peers })
        #expect(policy.acceptsUpgrade(origin: "http://10.0.0.1:8081", host: "10.0.0.1:8081"))  // its own
        #expect(policy.acceptsUpgrade(origin: "http://10.0.0.2:8082", host: "10.0.0.1:8081"))
        #expect(policy.acceptsUpgrade(origin: "https://node3.example.com", host: "10.0.0.1:8081"))
        #expect(!policy.acceptsUpgrade(origin: "https://10.0.0.2:8082", host: "10.0.0.1:8081"))  // another scheme
        #expect(!policy.acceptsUpgrade(origin: "http://10.0.0.9:1", host: "10.0.0.1:8081"))
        #expect(!policy.acceptsUpgrade(origin: "https://evil.example", host: "10.0.0.1:8081"))
        #expect(!OriginPolicy(allowed: [], developmentMode: false).acceptsUpgrade(origin: "http://10.0.0.2:8082", host: "10.0.0.1:8081"))
        let csp = WebApp.pagePolicy(connectTo: peers.compactMap(OriginPolicy.connectSource(ofSignaling:)))
        #expect(csp.contains("connect-src 'self' ws://10.0.0.2:8082 wss://node3.example.com;"), "\(csp)")
        #expect(OriginPolicy.connectSource(ofSignaling: "ws://a b/v1/signal") == nil)
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

    /// The binary carries the web app and the API document: a copy of it alone, elsewhere, serves
    /// them as they are in the source tree; HEAD answers as GET does, without the body.
    @Test func aCopiedBinaryServesTheWebApp() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-copy-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: MajlisProcess.executable.path, toPath: folder + "/majlis")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: folder + "/majlis")
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", folder + "/data"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        // A process another test forks while the copy is still open for writing holds it open
        // until it execs: then starting the copy fails with "text file busy" for a moment.
        var started = false
        for attempt in 1...20 where !started {
            do {
                try process.run()
                started = true
            } catch let error as NSError where attempt < 20 && (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(ETXTBSY) {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        defer {
            process.terminate()
            process.waitForExit()
        }
        var banner = ""
        while !banner.contains("operator console:") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            banner += String(decoding: chunk, as: UTF8.self)
        }
        let line = try #require(banner.split(separator: "\n").first { $0.hasPrefix("majlis ready:") })
        let port = try #require(line.split(separator: " ")[2].split(separator: ":").last?.split(separator: "/").first.flatMap { Int($0) })
        let tree = URL(fileURLWithPath: BrowserTests.web).deletingLastPathComponent().path
        for (path, file) in [("/", "Web/index.html"), ("/app/main.js", "Web/app/main.js"), ("/console", "Web/console.html"), ("/messages", "Web/messages.html"), ("/app/messages.js", "Web/app/messages.js"), ("/v1/openapi.yaml", "docs/openapi.yaml")] {
            let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)\(path)")!)
            #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(path)")
            #expect(data == FileManager.default.contents(atPath: tree + "/" + file), "\(path)")
        }
        let icon = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/favicon.ico")!)
        #expect((icon.1 as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "image/svg+xml")
        let head = try RawHTTP.exchange(port: port, "HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(RawHTTP.statuses(head) == [200] && head.lowercased().contains("content-length: \(FileManager.default.contents(atPath: tree + "/Web/index.html")?.count ?? -1)"), "\(head)")
        #expect(!head.contains("<!doctype html>"))
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
        // Asked for by the id it was given (the page keeps it), the same user again.
        let again = try JSONDecoder().decode(
            JSONValue.self, from: try await Self.get(server, "/v1/dev/token?name=Layla&user=\(try #require(minted["user"]?.stringValue))").body)
        #expect(again["user"] == minted["user"] && again["name"] == "Layla")
        #expect(try await Self.get(server, "/v1/dev/token?name=x&user=bad%20id").status == 400)
        // The token works: hello, create a room.
        let client = try await TestClient.connect(server.url)
        let hello = try await client.request("hello", ["token": try #require(minted["token"])])
        #expect(hello["data"]?["user"]?["name"] == "ليلى")
    }
}
