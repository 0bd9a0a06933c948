import MajlisProtocol
import Testing

@testable import MajlisForwarding
@testable import MajlisTransport

/// SDP, ICE-lite and the per-peer rewriting, without sockets.
@Suite struct WebRTCNegotiationTests {
    /// Chrome 156's offer for a microphone and one seat, as the web app makes it, with a video
    /// section and a data channel added (both must be refused).
    static let chromeOffer = """
        v=0\r
        o=- 3301321689575104711 2 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE 0 1 2 3\r
        a=extmap-allow-mixed\r
        a=msid-semantic: WMS\r
        m=audio 42654 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126\r
        c=IN IP4 192.0.2.2\r
        a=rtcp:9 IN IP4 0.0.0.0\r
        a=candidate:3084751746 1 udp 2122194687 192.0.2.2 42654 typ host generation 0 network-id 1\r
        a=ice-ufrag:fi91\r
        a=ice-pwd:qwW1LTfVT+hdX4idnlAE8AtJ\r
        a=ice-options:trickle\r
        a=fingerprint:sha-256 5F:03:FA:3C:13:96:32:1D:AE:73:DE:0F:22:89:77:0B:AB:07:AC:71:97:AC:97:BC:A4:21:A3:7B:BC:50:EF:6F\r
        a=setup:actpass\r
        a=mid:0\r
        a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level\r
        a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time\r
        a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01\r
        a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid\r
        a=sendonly\r
        a=msid:- 0e0a7a2c-fabf-492e-a46b-e32a20bce817\r
        a=rtcp-mux\r
        a=rtcp-rsize\r
        a=rtpmap:111 opus/48000/2\r
        a=rtcp-fb:111 transport-cc\r
        a=fmtp:111 minptime=10;useinbandfec=1\r
        a=rtpmap:63 red/48000/2\r
        a=fmtp:63 111/111\r
        a=rtpmap:9 G722/8000\r
        a=rtpmap:0 PCMU/8000\r
        a=rtpmap:13 CN/8000\r
        a=ssrc:1641253823 cname:9GmfZxXvPUb+fHzD\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126\r
        c=IN IP4 0.0.0.0\r
        a=ice-ufrag:fi91\r
        a=ice-pwd:qwW1LTfVT+hdX4idnlAE8AtJ\r
        a=fingerprint:sha-256 5F:03:FA:3C:13:96:32:1D:AE:73:DE:0F:22:89:77:0B:AB:07:AC:71:97:AC:97:BC:A4:21:A3:7B:BC:50:EF:6F\r
        a=setup:actpass\r
        a=mid:1\r
        a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level\r
        a=recvonly\r
        a=rtcp-mux\r
        a=rtpmap:111 opus/48000/2\r
        a=fmtp:111 minptime=10;useinbandfec=1\r
        a=rtpmap:63 red/48000/2\r
        a=fmtp:63 111/111\r
        m=video 9 UDP/TLS/RTP/SAVPF 96\r
        a=mid:2\r
        a=recvonly\r
        a=rtcp-mux\r
        a=rtpmap:96 VP8/90000\r
        m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r
        a=mid:3\r
        a=sctp-port:5000\r

        """

    @Test func chromesOfferIsReadAndAnswered() throws {
        let offer = try WebRTCOffer(sdp: Self.chromeOffer)
        #expect(offer.iceUfrag == "fi91" && offer.icePassword == "qwW1LTfVT+hdX4idnlAE8AtJ")
        #expect(offer.fingerprint.first == 0x5F && offer.fingerprint.last == 0x6F && offer.fingerprint.count == 32)
        #expect(offer.sections.map(\.usable) == [true, true, false, false])
        #expect(offer.sections[0].peerSends && !offer.sections[0].peerReceives && offer.sections[1].peerReceives)
        #expect(offer.sections[0].opusPayloadType == 111 && offer.sections[0].redPayloadType == 63 && offer.sections[0].audioLevelExtension == 1)

        let ice = ICECredentials(ufrag: "srv1", password: "0123456789abcdefghijklmn")
        let answer = WebRTCAnswer(offer: offer, seats: 3, ice: ice, fingerprint: DTLSIdentity.text([UInt8](repeating: 0xAB, count: 32)), host: "127.0.0.1", port: 7882)
        #expect(answer.uplink == "0")
        #expect(answer.tracks == [WebRTCAnswer.Track(mid: "1", seat: 0, ssrc: 0x4D4A_0000)])
        #expect(answer.parameters == WebRTCParameters(opusPayloadType: 111, redPayloadType: 63, audioLevelExtension: 1, sends: true, trackSSRCs: [0x4D4A_0000, 0x4D4A_0001, 0x4D4A_0002]))
        let sdp = try SessionDescription(parsing: answer.sdp)
        #expect(sdp.value("ice-lite") != nil && sdp.value("group") == "BUNDLE 0 1")
        #expect(sdp.media.map(\.port) == [7882, 7882, 0, 0])
        #expect(sdp.media.map { $0.value("mid") } == ["0", "1", "2", "3"])
        #expect(sdp.media[0].has("recvonly") && sdp.media[1].has("sendonly"))
        #expect(sdp.media[1].values("ssrc") == ["1296695296 cname:majlis", "1296695296 msid:majlis seat0"])
        #expect(sdp.media[0].value("candidate") == "1 1 udp 2130706431 127.0.0.1 7882 typ host")
        #expect(sdp.media[0].value("setup") == "passive" && sdp.media[0].value("ice-ufrag") == "srv1")
        #expect(sdp.media[0].values("extmap") == ["1 urn:ietf:params:rtp-hdrext:ssrc-audio-level"])
        #expect(sdp.media[0].formats == ["111", "63"] && !answer.sdp.contains("transport-cc"))
        // The answer is itself an offer Majlis could read (a valid SDP with everything in place).
        #expect(try WebRTCOffer(sdp: answer.sdp.replacingOccurrences(of: "a=setup:passive", with: "a=setup:active")).sections.filter(\.usable).count == 2)
    }

    @Test func offersMajlisCannotAnswerSayWhy() {
        func reason(_ sdp: String) -> String? {
            do {
                _ = try WebRTCOffer(sdp: sdp)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(reason("")?.contains("v=0") == true)
        #expect(reason(String(repeating: "a", count: 70_000))?.contains("longer") == true)
        #expect(reason(Self.chromeOffer.replacingOccurrences(of: "a=ice-pwd:qwW1LTfVT+hdX4idnlAE8AtJ", with: "a=ice-pwd:short"))?.contains("ice-pwd") == true)
        #expect(reason(Self.chromeOffer.replacingOccurrences(of: ":6F\r", with: ":6\r"))?.contains("32 hex bytes") == true)
        #expect(reason(Self.chromeOffer.replacingOccurrences(of: "a=rtcp-mux\r\n", with: ""))?.contains("rtcp-mux") == true)
        #expect(reason(Self.chromeOffer.replacingOccurrences(of: "a=mid:1\r", with: "a=mid:0\r"))?.contains("two media sections") == true)
        #expect(reason(Self.chromeOffer.replacingOccurrences(of: "m=audio 9 UDP", with: "m=audio 99999999 UDP"))?.contains("bad m= line") == true)
        // Within 64 KiB, an offer once cost formats times attributes to read (10,300 formats and
        // 3,900 a=fmtp lines took seconds): a section lists at most 128 formats and 256 attributes.
        let formats = (0..<129).map { " \($0 % 128)" }.joined()
        #expect(reason(Self.chromeOffer.replacingOccurrences(of: "SAVPF 111 63 9 0 8 13 110 126\r", with: "SAVPF\(formats)\r"))?.contains("129 formats") == true)
        let fmtps = String(repeating: "a=fmtp:63 111/111\r\n", count: 300)
        #expect(reason(Self.chromeOffer.replacingOccurrences(of: "a=rtcp-mux\r\n", with: "a=rtcp-mux\r\n" + fmtps))?.contains("256 attributes") == true)
    }

    @Test func iceLiteChecksAreVerifiedAndAnswered() throws {
        let server = ICECredentials(ufrag: "srv1", password: "0123456789abcdefghijklmn")
        let id = MediaBinding.transactionId()
        let request = ICELite.request(transactionId: id, remote: server, localUfrag: "fi91", nominate: true)
        let parsed = try STUNMessage(parsing: request)
        #expect(ICELite.localUfrag(of: parsed) == "srv1")
        #expect(ICELite.check(request, request: parsed, local: server) == ICELite.Check(peerUfrag: "fi91", nominated: true, transactionId: id))
        #expect(ICELite.check(request, request: parsed, local: ICECredentials(ufrag: "srv1", password: "another-password-of-24ch")) == nil)
        #expect(ICELite.check(request, request: parsed, local: ICECredentials(ufrag: "srv2", password: server.password)) == nil)
        var tampered = request
        tampered[tampered.count - 1] ^= 1  // the FINGERPRINT no longer matches
        #expect(ICELite.check(tampered, request: try STUNMessage(parsing: tampered), local: server) == nil)
        let address = UDPAddress(host: "127.0.0.1", port: 5555)!
        let answer = ICELite.success(transactionId: id, from: address, local: server)
        #expect(ICELite.isSuccess(answer, remote: server))
        #expect(!ICELite.isSuccess(answer, remote: ICECredentials(ufrag: "srv1", password: "another-password-of-24ch")))
        #expect(try STUNMessage(parsing: answer).attribute(.xorMappedAddress).flatMap(STUNMessage.decodeXorMappedAddress)?.port == 5555)
    }

    @Test func aTrackStaysContinuousAcrossSpeakers() {
        var track = TrackRewriter(ssrc: 7)
        let first = (0..<3).map { track.map(source: 1, sequence: 100 + UInt16($0), timestamp: 5_000 + UInt32($0) * 960, now: 1_000 + Double($0) * 20) }
        #expect(first.map(\.sequence) == [100, 101, 102] && first.map(\.timestamp) == [5_000, 5_960, 6_920])
        // Another speaker 500 ms later, with numbers of its own: one more sequence number, 500 ms more time.
        let next = track.map(source: 2, sequence: 40_000, timestamp: 9, now: 1_540)
        #expect(next.sequence == 103 && next.timestamp == 6_920 + 500 * 48)
        #expect(track.map(source: 2, sequence: 40_001, timestamp: 969, now: 1_560) == (104, 6_920 + 500 * 48 + 960))
        // A late packet of the current speaker keeps its place; sequence numbers wrap.
        #expect(track.map(source: 2, sequence: 39_999, timestamp: 0, now: 1_561).sequence == 102)
        var wrapping = TrackRewriter(ssrc: 8)
        _ = wrapping.map(source: 1, sequence: 65_535, timestamp: 0, now: 0)
        #expect(wrapping.map(source: 3, sequence: 7, timestamp: 0, now: 20).sequence == 0)
    }

    @Test func headersAreRewrittenInPlace() throws {
        let red = REDPayload(redundant: [.init(payloadType: 111, timestampOffset: 960, data: [6, 6])], primaryPayloadType: 111, primary: [7, 7])
        var packet = RTPPacket(
            payloadType: 63, sequenceNumber: 1, timestamp: 2, ssrc: 3, extensions: [RTPPacket.audioLevelExtension(id: 1, voice: true, level: 30)],
            payload: red.serialized()
        ).serialized()
        let length = packet.count
        packet.withUnsafeMutableBytes { bytes in
            RTPRewrite.setPayloadType(bytes, 100)
            RTPRewrite.setSequence(bytes, 0xBEEF)
            RTPRewrite.setTimestamp(bytes, 0xDEAD_BEEF)
            RTPRewrite.setSSRC(bytes, 0x4D4A_0002)
            #expect(RTPRewrite.renameExtension(bytes, length: length, from: 1, to: 5))
            #expect(RTPRewrite.renameREDBlocks(bytes, length: length, from: 111, to: 109))
        }
        let rewritten = try RTPPacket(parsing: packet)
        #expect(rewritten.payloadType == 100 && rewritten.sequenceNumber == 0xBEEF && rewritten.timestamp == 0xDEAD_BEEF && rewritten.ssrc == 0x4D4A_0002)
        #expect(rewritten.audioLevel(extensionId: 5)! == (true, 30))
        let blocks = try REDPayload(parsing: rewritten.payload)
        #expect(blocks.primaryPayloadType == 109 && blocks.redundant.map(\.payloadType) == [109] && blocks.primary == [7, 7])
        // Truncated packets are left alone.
        var short: [UInt8] = [0x90, 111, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xBE, 0xDE, 0, 9]
        short.withUnsafeMutableBytes { #expect(!RTPRewrite.renameExtension($0, length: 16, from: 1, to: 5)) }
    }
}
