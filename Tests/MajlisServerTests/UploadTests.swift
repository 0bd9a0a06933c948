import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Media messages' uploads by tus 1.0 against a real server: made, sent in parts over
/// connections cut at random points, resumed from where the server says, and read back
/// byte-identical by the members of the conversation a message sent it to, whole or by range.
@Suite struct UploadTests {
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var json: JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: Data(body)) }
    }

    /// One HTTP call as a tus client makes it (`Tus-Resumable` unless `tus` is false).
    static func call(
        _ server: TestServer, _ method: String, _ path: String, token: String?, headers: [String: String] = [:], body: [UInt8]? = nil, tus: Bool = true
    ) async throws -> Answer {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.server.port)\(path)")!)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if tus { request.setValue("1.0.0", forHTTPHeaderField: "Tus-Resumable") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body { request.httpBody = Data(body) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields[String(describing: name).lowercased()] = String(describing: value) }
        return Answer(status: http.statusCode, headers: fields, body: Array(data))
    }

    static func create(_ server: TestServer, token: String, length: Int, type: String = "image/png", name: String = "photo.png") async throws -> String {
        let metadata = "filename \(Data(name.utf8).base64EncodedString()),filetype \(Data(type.utf8).base64EncodedString())"
        let made = try await call(server, "POST", "/v1/uploads", token: token, headers: ["Upload-Length": String(length), "Upload-Metadata": metadata])
        #expect(made.status == 201 && made.headers["upload-expires"]?.hasSuffix("GMT") == true, "\(made)")
        let location = try #require(made.headers["location"])
        return String(location.dropFirst("/v1/uploads/".count))
    }

    static func offset(_ server: TestServer, _ id: String, token: String) async throws -> Int {
        let head = try await call(server, "HEAD", "/v1/uploads/\(id)", token: token)
        #expect(head.status == 200 && head.headers["cache-control"] == "no-store", "\(head)")
        return try #require(head.headers["upload-offset"].flatMap { Int($0) })
    }

    /// Sends `file` from `offset` in a PATCH, cut (the connection closed) after `count` of its bytes.
    static func cutPatch(_ server: TestServer, _ id: String, token: String, file: [UInt8], from offset: Int, count: Int) throws {
        let connection = try RawHTTP(port: server.server.port)
        connection.send(
            "PATCH /v1/uploads/\(id) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nTus-Resumable: 1.0.0\r\n"
                + "Content-Type: application/offset+octet-stream\r\nUpload-Offset: \(offset)\r\nContent-Length: \(file.count - offset)\r\n\r\n")
        connection.send(Array(file[offset..<offset + count]))
    }

    @Test func anUploadCutTenTimesIsResumedAndSentOnceByteIdentical() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let huda = server.token("huda")
        let omar = try await TestClient.signedIn(server, user: "omar")
        var generator = SystemRandomNumberGenerator()
        let file = (0..<1_500_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let options = try await Self.call(server, "OPTIONS", "/v1/uploads", token: nil, tus: false)
        #expect(options.status == 204 && options.headers["tus-version"] == "1.0.0" && options.headers["tus-extension"]?.contains("creation") == true)
        let id = try await Self.create(server, token: huda, length: file.count)
        #expect(try await Self.offset(server, id, token: huda) == 0)

        var cuts = 0
        var attempts = 0
        while cuts < 10 {
            attempts += 1
            try #require(attempts < 100, "the upload never moved on")
            let offset = try await Self.offset(server, id, token: huda)
            let remaining = file.count - offset
            guard remaining > 20 else { break }
            let count = Int.random(in: 1..<remaining / 10 + 2, using: &generator)
            try await offPool { try Self.cutPatch(server, id, token: huda, file: file, from: offset, count: count) }
            cuts += 1
        }
        // What the cut connections carried is kept (once the server has seen them close).
        #expect(await eventually { ((try? await Self.offset(server, id, token: huda)) ?? 0) > 0 }, "the cut PATCHes kept nothing")
        print("ten cut PATCHes left \(try await Self.offset(server, id, token: huda)) of \(file.count) bytes stored")
        // The rest, in one PATCH; the offset it starts from may move while a cut connection is
        // still being read (409 says where it stands now).
        var finished = false
        for _ in 0..<20 where !finished {
            let offset = try await Self.offset(server, id, token: huda)
            let patch = try await Self.call(
                server, "PATCH", "/v1/uploads/\(id)", token: huda,
                headers: ["Content-Type": "application/offset+octet-stream", "Upload-Offset": String(offset)], body: Array(file[offset...]))
            #expect(patch.status == 204 || patch.status == 409, "\(patch)")
            finished = patch.status == 204 && patch.headers["upload-offset"] == String(file.count)
        }
        #expect(finished)
        #expect(try await Self.offset(server, id, token: huda) == file.count)

        // Sent twice under one client id: one message, which Omar reads back whole and by range.
        let sara = try await TestClient.signedIn(server, user: "huda")
        let args: [String: JSONValue] = [
            "to": "omar", "clientMsgId": "photo-1", "type": "image", "payload": ["media": .string(id), "width": 640, "height": 480],
            "fallback": "[Photo]",
        ]
        let sent = try await sara.request("msg.send", args)
        let again = try await sara.request("msg.send", args)
        #expect(sent["ok"] == true && again["data"]?["duplicate"] == true && again["data"]?["seq"] == sent["data"]?["seq"], "\(sent) \(again)")
        let message = try await omar.event("msg.new")
        let payload = try #require(message["data"]?["payload"])
        #expect(payload["media"] == .string(id) && payload["mime"] == "image/png" && payload["size"] == .int(Int64(file.count)) && payload["width"] == 640, "\(message)")
        let omarToken = server.token("omar")
        let whole = try await Self.call(server, "GET", "/v1/media/\(id)", token: omarToken, tus: false)
        #expect(whole.status == 200 && whole.headers["content-type"] == "image/png" && whole.headers["accept-ranges"] == "bytes")
        #expect(whole.body == file, "the blob is byte-identical")
        let part = try await Self.call(server, "GET", "/v1/media/\(id)", token: omarToken, headers: ["Range": "bytes=1000-299999"], tus: false)
        #expect(part.status == 206 && part.headers["content-range"] == "bytes 1000-299999/\(file.count)" && part.body == Array(file[1000..<300_000]))
        let tail = try await Self.call(server, "GET", "/v1/media/\(id)", token: omarToken, headers: ["Range": "bytes=-10"], tus: false)
        #expect(tail.status == 206 && tail.body == Array(file.suffix(10)))
        let outside = try await Self.call(server, "GET", "/v1/media/\(id)", token: omarToken, headers: ["Range": "bytes=9999999-"], tus: false)
        #expect(outside.status == 416 && outside.headers["content-range"] == "bytes */\(file.count)")
        // Nobody else reads it, and a sent upload stays.
        #expect(try await Self.call(server, "GET", "/v1/media/\(id)", token: server.token("mallory"), tus: false).status == 404)
        #expect(try await Self.call(server, "DELETE", "/v1/uploads/\(id)", token: huda).status == 409)
    }

    @Test func uploadsRefuseWhatTheyCannotTake() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let huda = server.token("huda")
        let png = "filetype \(Data("image/png".utf8).base64EncodedString())"
        // No token, no tus version, a type or size not offered.
        #expect(try await Self.call(server, "POST", "/v1/uploads", token: nil, headers: ["Upload-Length": "10", "Upload-Metadata": png]).status == 401)
        let noVersion = try await Self.call(server, "POST", "/v1/uploads", token: huda, headers: ["Upload-Length": "10", "Upload-Metadata": png], tus: false)
        #expect(noVersion.status == 412 && noVersion.headers["tus-version"] == "1.0.0")
        let html = "filetype \(Data("text/html".utf8).base64EncodedString())"
        #expect(try await Self.call(server, "POST", "/v1/uploads", token: huda, headers: ["Upload-Length": "10", "Upload-Metadata": html]).status == 415)
        #expect(try await Self.call(server, "POST", "/v1/uploads", token: huda, headers: ["Upload-Length": String(11 << 20), "Upload-Metadata": png]).status == 413)
        #expect(try await Self.call(server, "POST", "/v1/uploads", token: huda, headers: ["Upload-Metadata": png]).status == 400)

        let id = try await Self.create(server, token: huda, length: 10)
        let patch = { (token: String, offset: Int, type: String, body: [UInt8]) in
            try await Self.call(server, "PATCH", "/v1/uploads/\(id)", token: token, headers: ["Content-Type": type, "Upload-Offset": String(offset)], body: body)
        }
        #expect(try await patch(huda, 0, "application/json", [1, 2, 3]).status == 415)
        #expect(try await patch(server.token("omar"), 0, "application/offset+octet-stream", [1, 2, 3]).status == 404)
        #expect(try await patch(huda, 0, "application/offset+octet-stream", [1, 2, 3]).headers["upload-offset"] == "3")
        let wrong = try await patch(huda, 0, "application/offset+octet-stream", [1, 2, 3])
        #expect(wrong.status == 409 && wrong.headers["upload-offset"] == "3", "\(wrong)")
        #expect(try await patch(huda, 3, "application/offset+octet-stream", Array(repeating: 9, count: 8)).status == 413)
        #expect(try await Self.offset(server, id, token: huda) == 3)

        // An unfinished upload is not sent, nor one of the wrong kind; it may be thrown away.
        let client = try await TestClient.signedIn(server, user: "huda")
        let early = try await client.request(
            "msg.send", ["to": "omar", "clientMsgId": "c1", "type": "image", "payload": ["media": .string(id)], "fallback": "[Photo]"])
        #expect(early["error"]?["code"] == "bad_request", "\(early)")
        #expect(try await patch(huda, 3, "application/offset+octet-stream", Array(repeating: 9, count: 7)).headers["upload-offset"] == "10")
        let voice = try await client.request(
            "msg.send", ["to": "omar", "clientMsgId": "c2", "type": "voice", "payload": ["media": .string(id)], "fallback": "[Voice]"])
        #expect(voice["error"]?["code"] == "bad_request", "\(voice)")
        #expect(try await Self.call(server, "GET", "/v1/media/\(id)", token: huda, tus: false).body == [1, 2, 3] + Array(repeating: 9, count: 7))
        #expect(try await Self.call(server, "DELETE", "/v1/uploads/\(id)", token: huda).status == 204)
        #expect(try await Self.call(server, "HEAD", "/v1/uploads/\(id)", token: huda).status == 404)
    }
}
