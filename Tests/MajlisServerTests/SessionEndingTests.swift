import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Sessions that end by the app's word: revoked by its backend (every device of the user is told
/// and closed, and tokens issued before are refused), or, under the one-device policy, by a
/// sign-in on another device. On one node here; across nodes in `ClusterMessagingTests`.
@Suite struct SessionEndingTests {
    typealias API = ServerAPITests

    /// The user's devices are told why (`session.ended`) and closed with `code`.
    static func ended(_ client: TestClient, reason: String, code: CloseCode) async throws -> JSONValue {
        let event = try await client.event("session.ended")
        #expect(event["data"]?["reason"] == .string(reason), "\(event)")
        #expect(try await client.closed() == code.rawValue)
        return event
    }

    @Test func aRevokedUserIsSignedOutEverywhereAndItsOldTokensAreRefused() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let oldToken = server.token("huda")
        let phone = try await TestClient.signedIn(server, user: "huda", device: "phone")
        let web = try await TestClient.signedIn(server, user: "huda", device: "web")
        let omar = try await TestClient.signedIn(server, user: "omar")
        let revoked = try await API.call(server, "POST", "/v1/users/huda/sessions/revoke", #"{"reason":"password changed"}"#)
        #expect(revoked.status == 200 && revoked.body["ended"] == 2 && revoked.body["user"] == "huda", "\(revoked)")
        for device in [phone, web] {
            let event = try await Self.ended(device, reason: "revoked", code: .unauthorized)
            #expect(event["data"]?["message"] == "password changed")
        }
        // Another user is untouched.
        #expect(try await omar.request("ping")["ok"] == true)

        // A token issued before the revocation (or in its second) opens no session, nor renews one.
        let again = try await TestClient.connect(server.url)
        let refused = try await again.request("hello", ["token": .string(oldToken)])
        #expect(refused["error"]?["code"] == "unauthorized" && refused["error"]?["message"]?.stringValue?.contains("password changed") == true, "\(refused)")
        #expect(try await again.closed() == CloseCode.unauthorized.rawValue)
        let revokedAt = try #require(revoked.body["revokedAt"]?.intValue)
        let renewing = try await TestClient.signedIn(server, user: "huda", device: "phone", token: server.token("huda", issuedAt: revokedAt / 1000 + 1))
        let renewal = try await renewing.request("session.renew", ["token": .string(oldToken)])
        #expect(renewal["error"]?["code"] == "unauthorized", "\(renewal)")
        #expect(try await renewing.request("ping")["ok"] == true)

        let bad = try await API.call(server, "POST", "/v1/users/huda/sessions/revoke", #"{"reason":""}"#)
        #expect(bad.status == 400, "\(bad)")
        let unknownField = try await API.call(server, "POST", "/v1/users/huda/sessions/revoke", #"{"why":"x"}"#)
        #expect(unknownField.status == 400, "\(unknownField)")
    }

    @Test func underTheOneDevicePolicyASignInElsewhereEndsTheOtherDevices() async throws {
        let server = try TestServer { $0.oneDevicePerUser = true }
        defer { server.destroy() }
        let phone = try await TestClient.signedIn(server, user: "huda", device: "phone")
        let omar = try await TestClient.signedIn(server, user: "omar", device: "phone")
        let web = try await TestClient.signedIn(server, user: "huda", device: "web")
        _ = try await Self.ended(phone, reason: "elsewhere", code: .replaced)
        #expect(try await web.request("ping")["ok"] == true)
        #expect(try await omar.request("ping")["ok"] == true)
        // The phone signs in again: now the web page is the one that ends; the phone gets the
        // user's messages.
        let phoneAgain = try await TestClient.signedIn(server, user: "huda", device: "phone")
        _ = try await Self.ended(web, reason: "elsewhere", code: .replaced)
        _ = try await omar.request("msg.send", ["to": "huda", "text": "hi", "clientMsgId": "o1"])
        #expect(try await phoneAgain.event("msg.new")["data"]?["text"] == "hi")
    }
}
