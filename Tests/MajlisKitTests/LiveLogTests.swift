import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MajlisKit
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Logs on request (docs/protocol.md section 20) between the SDK and the real server: the app's
/// backend asks a user's client for its log through the server API; the client, told at once or
/// at its next connection, uploads what its `ClientLog` kept and hands it over; the backend reads
/// it, with no token in it.
@Suite(.serialized) struct LiveLogTests {
    func backend(_ server: TestServer, _ method: String, _ path: String, json: JSONValue? = nil) async throws -> (status: Int, body: Data) {
        try await LiveRoomTests.call(server, method, path, json: json)
    }

    func json(_ data: Data) -> JSONValue { (try? JSONDecoder().decode(JSONValue.self, from: data)) ?? .null }

    /// Waits (polling the API) until log `id` is delivered; its text.
    func delivered(_ server: TestServer, _ id: String) async throws -> String {
        let deadline = Date().addingTimeInterval(30)
        while true {
            let status = json(try await backend(server, "GET", "/v1/logs/\(id)").body)
            if status["request"]?["state"] == "delivered" { break }
            guard Date() < deadline else { throw TestClient.Timeout(description: "log \(id) never delivered: \(status)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        let content = try await backend(server, "GET", "/v1/logs/\(id)/content")
        #expect(content.status == 200)
        return String(decoding: content.body, as: UTF8.self)
    }

    @Test func aLogAskedOfAnOfflineClientArrivesAfterItConnectsWithoutItsToken() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let asked = try await backend(server, "POST", "/v1/users/omar/logs", json: ["minutes": 5, "reason": "support ticket 7"])
        #expect(asked.status == 201)
        let id = try #require(json(asked.body)["request"]?["id"]?.stringValue)
        #expect(json(asked.body)["request"]?["state"] == "asked")
        #expect(try await backend(server, "GET", "/v1/logs/\(id)/content").status == 404)

        // Omar's app: its SDK logs into a ClientLog, and answers requests.
        let log = ClientLog()
        let token = server.token("omar")
        let logger = log.logger(label: "app")
        logger.info("signed in with token \(token)")
        logger.info(#"config {"token": "\#(token)", "room": "salon"}"#)
        let client = LiveSignalingClient(url: server.url, token: token, logger: log.logger(label: "signaling"))
        let responder = LogResponder(signaling: client, transfer: HTTPMediaTransfer(signaling: client), log: log)
        responder.start()
        defer { responder.stop() }
        _ = try await client.connect()
        let text = try await delivered(server, id)
        #expect(text.contains("[app] signed in with token [redacted]") && text.contains(#""room": "salon""#), "\(text)")
        #expect(text.contains("[signaling]"), "\(text)")
        #expect(!text.contains(token) && !text.contains(String(token.split(separator: ".").last ?? "")), "\(text)")
        let status = json(try await backend(server, "GET", "/v1/logs/\(id)").body)["request"]
        #expect(status?["user"] == "omar" && status?["reason"] == "support ticket 7" && status?["size"]?.intValue == Int64(text.utf8.count))

        // Asked while connected: told at once.
        logger.warning("the room went quiet")
        let again = json(try await backend(server, "POST", "/v1/users/omar/logs", json: [:]).body)
        let second = try #require(again["request"]?["id"]?.stringValue)
        #expect(try await delivered(server, second).contains("[app] the room went quiet"))
        await client.disconnect()
    }

    @Test func deliveriesAndAsksThatCannotBeAreRefused() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let ask = try await backend(server, "POST", "/v1/users/omar/logs", json: [:])
        let id = try #require(json(ask.body)["request"]?["id"]?.stringValue)
        #expect(try await backend(server, "POST", "/v1/users/omar/logs", json: ["minutes": 0]).status == 400)
        #expect(try await backend(server, "POST", "/v1/users/omar/logs", json: ["minutes": 10_081]).status == 400)
        #expect(try await backend(server, "POST", "/v1/users/omar/logs", json: ["until": -1]).status == 400)
        #expect(try await backend(server, "POST", "/v1/users/omar/logs", json: ["reason": ""]).status == 400)
        #expect(try await backend(server, "GET", "/v1/logs/nope").status == 404)

        let huda = LiveSignalingClient(url: server.url, token: server.token("huda"))
        _ = try await huda.connect()
        let transfer = HTTPMediaTransfer(signaling: huda)
        let text = try await transfer.create(length: 2, type: LogRequest.type, filename: nil)
        _ = try await transfer.append(Data("hi".utf8), to: text, at: 0)
        // Omar's request is not Huda's to answer, and Huda's upload not Omar's to hand over.
        let omar = LiveSignalingClient(url: server.url, token: server.token("omar"))
        _ = try await omar.connect()
        for (client, code) in [(huda, ErrorCode.requestNotFound), (omar, .badRequest)] {
            do {
                _ = try await client.request("log.deliver", ["id": .string(id), "media": .string(text)])
                Issue.record("delivered what was not the caller's")
            } catch {
                #expect(error.code == code)
            }
        }
        // Not finished; not text.
        let omarTransfer = HTTPMediaTransfer(signaling: omar)
        let unfinished = try await omarTransfer.create(length: 10, type: LogRequest.type, filename: nil)
        let picture = try await omarTransfer.create(length: 1, type: "image/png", filename: nil)
        _ = try await omarTransfer.append(Data([1]), to: picture, at: 0)
        for media in [unfinished, picture] {
            await #expect(throws: MajlisError.self) { _ = try await omar.request("log.deliver", ["id": .string(id), "media": .string(media)]) }
        }
        #expect(json(try await backend(server, "GET", "/v1/logs/\(id)").body)["request"]?["state"] == "asked")
        await huda.disconnect()
        await omar.disconnect()
    }
}
