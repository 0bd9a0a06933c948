import Foundation
import MajlisForwarding
import MajlisLab
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import MajlisTransport
import Testing

/// Browsers' media (WebRTC: ICE-lite, DTLS-SRTP, SDP over signaling) against a real server,
/// with `WebRTCClient` in the browser's place and raw native clients beside it.
@Suite struct WebRTCTests {
    /// Negotiates `client` for `member` (joined to `room`); returns the answer's `tracks`.
    static func negotiate(_ client: WebRTCClient, _ member: TestClient, room: String, seats: Int, fingerprint: [UInt8]? = nil) async throws -> JSONValue {
        let answer = try await member.call("webrtc.offer", room: room, ["sdp": .string(client.offer(seats: seats, fingerprint: fingerprint))])
        let sdp = try #require(answer["sdp"]?.stringValue)
        #expect(sdp.contains("a=ice-lite") && sdp.contains("a=setup:passive") && sdp.contains("a=fingerprint:sha-256 "))
        try await offPool { Result { try client.connect(answer: sdp) } }.get()
        return answer["tracks"] ?? .null
    }

    @Test func aBrowserAndANativeClientHearEachOtherWithTheirOwnNumbers() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        let guest = try await TestClient.signedIn(server, user: "guest")
        let hostMedia = try RawMediaClient(settings: try #require(MediaSettings(try await host.call("room.create", room: "r", ["seatCount": 4])["media"])))
        let joined = try await guest.call("room.join", room: "r")
        let guestSSRC = try #require(joined["media"]?["ssrc"]?.intValue)
        // The browser chose other numbers than the router's own: Opus 109, RED 100, audio level 5.
        let browser = try WebRTCClient()
        browser.opusPayloadType = 109
        browser.redPayloadType = 100
        browser.audioLevelExtension = 5
        let tracks = try await Self.negotiate(browser, guest, room: "r", seats: 4)
        #expect(tracks.arrayValue?.count == 4)
        #expect(tracks.arrayValue?[2] == ["mid": "3", "seat": 2, "ssrc": .int(Int64(WebRTCParameters.trackSSRC(seat: 2)))])
        #expect(await offPool { hostMedia.bind() })

        // The host speaks from seat 2: the browser gets it on seat 2's track, in its own numbers.
        try await host.call("seat.take", room: "r", ["index": 2])
        for marker in [UInt8(1), 2, 3] { try hostMedia.send([marker, 0, 0, 0, 0, 0, 0, 0]) }
        let heard = try await offPool { Result { try (0..<3).compactMap { _ in try browser.receive() } } }.get()
        #expect(heard.map { $0.payload[0] } == [1, 2, 3])
        #expect(heard.allSatisfy { $0.ssrc == WebRTCParameters.trackSSRC(seat: 2) && $0.payloadType == 109 })
        #expect(heard.map(\.sequenceNumber) == [heard[0].sequenceNumber, heard[0].sequenceNumber &+ 1, heard[0].sequenceNumber &+ 2])
        #expect(heard[0].audioLevel(extensionId: 5)! == (true, 30))

        // The browser's guest is not seated: nothing of it reaches the host (the host's first
        // packet below is the one sent once seated).
        try browser.send([9])
        try hostMedia.send([10])
        #expect(try await offPool { Result { try browser.receive() } }.get()?.payload == [10])
        // Seated, it is heard by the host with its member SSRC, Opus 111 and audio level 1.
        try await guest.call("seat.take", room: "r", ["index": 0])
        try browser.send([11, 0, 0])
        let fromBrowser = try await offPool { Result { try hostMedia.receive() } }.get()
        #expect(fromBrowser?.payload == [11, 0, 0])
        #expect(fromBrowser?.ssrc == UInt32(guestSSRC) && fromBrowser?.payloadType == 111)
        let level = try #require(fromBrowser?.audioLevel(extensionId: 1))
        #expect(level == (true, 30))
        // The host's switch to another seat keeps the browser's tracks continuous and apart.
        try await host.call("seat.switch", room: "r", ["to": 3])
        try hostMedia.send([4, 0, 0, 0, 0, 0, 0, 0])
        let moved = try #require(try await offPool { Result { try browser.receive() } }.get())
        #expect(moved.ssrc == WebRTCParameters.trackSSRC(seat: 3) && moved.payload[0] == 4)
        let levels = try await host.event("speaker.levels") { $0["data"]?["levels"]?.arrayValue?.contains { $0["user"] == "guest" } == true }
        #expect(levels["data"]?["levels"]?.arrayValue?.first { $0["user"] == "guest" }?["level"] == 76)
    }

    /// A browser's consent (RFC 7675) lapses 30 s after its last ICE check from the path media
    /// goes to: then nothing more is sent to it (it may have gone, and the address may be
    /// someone else's), until it checks again. On the router's own clock, moved by the test.
    @Test func mediaStopsWhenABrowsersConsentLapsesAndResumesWhenItChecks() async throws {
        let monotonic = ManualClock(now: SystemClock().now())
        let server = try TestServer(monotonic: monotonic)
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        let guest = try await TestClient.signedIn(server, user: "guest")
        let hostMedia = try RawMediaClient(settings: try #require(MediaSettings(try await host.call("room.create", room: "r", ["seatCount": 2])["media"])))
        try await guest.call("room.join", room: "r")
        let browser = try WebRTCClient()
        _ = try await Self.negotiate(browser, guest, room: "r", seats: 2)
        #expect(await offPool { hostMedia.bind() })
        try await host.call("seat.take", room: "r", ["index": 0])
        try hostMedia.send([1, 0, 0, 0])
        #expect(try await offPool { Result { try browser.receive() } }.get()?.payload.first == 1)

        monotonic.advance(by: .seconds(29))
        try hostMedia.send([2, 0, 0, 0])
        #expect(try await offPool { Result { try browser.receive() } }.get()?.payload.first == 2, "29 s after the check: still consented")
        monotonic.advance(by: .seconds(2))
        try hostMedia.send([3, 0, 0, 0])
        #expect(try await offPool { Result { try browser.receive() } }.get() == nil, "31 s after the check: nothing sent")

        #expect(await offPool { browser.check() }, "a consent check is answered")
        try hostMedia.send([4, 0, 0, 0])
        #expect(try await offPool { Result { try browser.receive() } }.get()?.payload.first == 4, "consent renewed")
    }

    @Test func badOffersGetClearErrorsAndTheRoomCarriesOn() async throws {
        let server = try TestServer { $0.offerBurst = 20 }  // several offers in a row, each refused for what it is
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        let guest = try await TestClient.signedIn(server, user: "guest")
        let hostMedia = try RawMediaClient(settings: try #require(MediaSettings(try await host.call("room.create", room: "r")["media"])))
        try await guest.call("room.join", room: "r")
        let browser = try WebRTCClient()
        let cases: [(String, String)] = [
            ("hello", "not an SDP"),
            ("v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\n", "fingerprint"),
            (browser.offer(seats: 1).replacingOccurrences(of: "sha-256", with: "sha-1"), "sha-256"),
            (browser.offer(seats: 1).replacingOccurrences(of: "a=setup:actpass", with: "a=setup:passive"), "DTLS server"),
            (browser.offer(seats: 1).replacingOccurrences(of: "opus/48000/2", with: "speex/16000"), "Opus"),
            (browser.offer(seats: 1).replacingOccurrences(of: "a=group:BUNDLE 0 1\r\n", with: ""), "BUNDLE"),
        ]
        for (sdp, reason) in cases {
            let reply = try await guest.request("webrtc.offer", ["room": "r", "sdp": .string(sdp)])
            #expect(reply["ok"] == false && reply["error"]?["code"] == "bad_request")
            #expect(reply["error"]?["message"]?.stringValue?.contains(reason) == true, "\(reply)")
        }
        let stranger = try await TestClient.signedIn(server, user: "stranger")
        let outside = try await stranger.request("webrtc.offer", ["room": "r", "sdp": .string(browser.offer(seats: 1))])
        #expect(outside["error"]?["code"] == "not_in_room")

        // A certificate other than the offer's fingerprint: the server ends the association
        // (close_notify), makes no keys and sends no media; counted.
        let liar = try WebRTCClient(receiveTimeoutMilliseconds: 500)
        let other = try DTLSIdentity(pem: DTLSIdentity.generatePEM())
        _ = try await Self.negotiate(liar, guest, room: "r", seats: 1, fingerprint: other.fingerprint)
        #expect(await eventually { server.server.mediaCounters.dtlsFailures == 1 })
        // DTLS garbage and RTP from the browser's checked address are dropped.
        for junk: [UInt8] in [[22, 0xFE, 0xFD, 0, 0, 9, 9, 9], [0x80, 111] + [UInt8](repeating: 1, count: 30), [23] + [UInt8](repeating: 0, count: 40)] {
            liar.socket.send(junk, to: try #require(liar.server))
        }
        // The room and its native members carry on: a second guest's browser connects and hears.
        let third = try await TestClient.signedIn(server, user: "third")
        try await third.call("room.join", room: "r")
        let good = try WebRTCClient()
        _ = try await Self.negotiate(good, third, room: "r", seats: 1)
        #expect(await offPool { hostMedia.bind() })
        try await host.call("seat.take", room: "r", ["index": 0])
        try hostMedia.send([42, 0, 0])
        #expect(try await offPool { Result { try good.receive() } }.get()?.payload == [42, 0, 0])
        #expect(try await offPool { Result { try liar.receive() } }.get() == nil)
        #expect(try await host.call("room.sync", room: "r")["members"] != nil)
    }
}
