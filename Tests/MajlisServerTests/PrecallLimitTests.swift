import Foundation
import MajlisProtocol
import MajlisTestSupport
import Testing

/// The pre-call tests' caps on a real server (docs/protocol.md section 15): what one address or
/// user may start is bounded, refusals say why, and what ends gives its place back.
@Suite struct PrecallLimitTests {
    @Test func oneAddressRunsTwoProbesAndFourEchoTests() async throws {
        // The server's wall time stands still: the probe cool-down cannot run out on a slow machine.
        let server = try TestServer(clock: ManualClock(now: SystemClock().now()))
        defer { server.destroy() }
        var probers: [TestClient] = []
        for index in 0..<3 {
            let client = try await TestClient.signedIn(server, user: "prober\(index)")
            probers.append(client)
            let answer = try await client.request("probe.start", ["up": 500_000, "down": 500_000])
            if index < 2 {
                #expect(answer["ok"] == true, "\(answer)")
            } else {
                #expect(answer["error"]?["code"] == "rate_limited", "\(answer)")
                #expect(answer["error"]?["message"]?.stringValue?.contains("your address runs 2 probes") == true, "\(answer)")
            }
        }
        // Stopped, a probe gives its place back; its user waits out the cool-down.
        _ = try await probers[0].request("probe.stop")
        let again = try await probers[0].request("probe.start", ["down": 500_000])
        #expect(again["error"]?["code"] == "rate_limited" && again["error"]?["message"]?.stringValue?.contains("one probe every 5 s") == true, "\(again)")
        let other = try await probers[2].request("probe.start", ["down": 500_000])
        #expect(other["ok"] == true, "\(other)")

        var echoers: [TestClient] = []
        for index in 0..<5 {
            let client = try await TestClient.signedIn(server, user: "echo\(index)")
            echoers.append(client)
            let answer = try await client.request("echo.start", ["delay": 2_000])
            #expect((answer["ok"] == true) == (index < 4), "echo test \(index): \(answer)")
        }
        // A connection that ends gives its test's place back.
        echoers[0].disconnect()
        #expect(await eventually {
            (try? await echoers[4].request("echo.start", ["delay": 2_000]))?["ok"] == true
        })
    }

    /// An echo test over WebRTC is an offer: under the connection's offer rate, before it is read.
    @Test func echoTestOffersCountAgainstTheOfferRate() async throws {
        // Five at once, then one a minute: none comes back however slow the machine is.
        let server = try TestServer { $0.offersPerSecond = 1.0 / 60 }
        defer { server.destroy() }
        let client = try await TestClient.signedIn(server, user: "offerer")
        var codes: [String] = []
        for _ in 0..<7 {
            let answer = try await client.request("echo.start", ["sdp": "v=0\r\nnot an offer\r\n"])
            codes.append(answer["error"]?["code"]?.stringValue ?? "ok")
        }
        #expect(codes.prefix(5).allSatisfy { $0 == "bad_request" } && codes.suffix(2).allSatisfy { $0 == "rate_limited" }, "\(codes)")
    }
}
