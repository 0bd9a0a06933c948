import Foundation
import MajlisProtocol
import MajlisLab
import MajlisServer
import MajlisTestSupport
import MajlisTransport
import Testing

/// The media router on loopback with raw clients that bypass the SDK: bindings, forwarding,
/// and speaking rights enforced by the server.
@Suite(.serialized) struct MediaRouterTests {
    @Test func onlyAllowedSpeakersAreForwarded() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        let speaker = try await TestClient.signedIn(server, user: "speaker")
        let intruder = try await TestClient.signedIn(server, user: "intruder")
        let listener = try await TestClient.signedIn(server, user: "listener")
        let quiet = try await TestClient.signedIn(server, user: "quiet", grants: Grants(publish: false))
        let hostMedia = try RawMediaClient(snapshot: try await host.call("room.create", room: "stage"))
        let speakerMedia = try RawMediaClient(snapshot: try await speaker.call("room.join", room: "stage"))
        let intruderMedia = try RawMediaClient(snapshot: try await intruder.call("room.join", room: "stage"))
        let listenerMedia = try RawMediaClient(snapshot: try await listener.call("room.join", room: "stage"))
        let quietMedia = try RawMediaClient(snapshot: try await quiet.call("room.join", room: "stage"))
        for media in [hostMedia, speakerMedia, intruderMedia, listenerMedia, quietMedia] { #expect(media.bind()) }
        // A binding signed with the wrong key is ignored.
        let forged = STUNMessage(type: .bindingRequest, transactionId: Array(repeating: 1, count: 12),
                                 attributes: [.init(type: STUNMessage.AttributeType.username.rawValue, value: Array(String(speakerMedia.ssrc).utf8))])
        intruderMedia.socket.send(STUNIntegrity.sign(forged, key: Array(repeating: 9, count: 30)), to: intruderMedia.server)

        try await host.call("seat.take", room: "stage", ["index": 0])
        let seated = try await speaker.call("seat.take", room: "stage", ["index": 1])
        _ = seated
        let seatEvent = try await listener.event("seat.updated") { $0["data"]?["seats"]?.arrayValue?.first?["user"] == "speaker" }
        #expect(seatEvent["data"]?["seats"]?.arrayValue?.first?["ssrc"]?.intValue == Int64(speakerMedia.ssrc))
        try await quiet.call("seat.take", room: "stage", ["index": 2])

        // The seated speaker is heard by everyone else, intact, with its own SSRC.
        try speakerMedia.send([1, 2, 3])
        let heard = try #require(try listenerMedia.receive())
        #expect(heard.ssrc == speakerMedia.ssrc && heard.payload == [1, 2, 3])
        #expect(heard.audioLevel(extensionId: 1)! == (true, 30))
        #expect(try hostMedia.receive()?.payload == [1, 2, 3])
        #expect(try intruderMedia.receive()?.payload == [1, 2, 3])
        // Everyone learns who is speaking, and then that the room fell silent.
        let levels = try await listener.event("speaker.levels") { $0["data"]?["levels"]?.arrayValue?.isEmpty == false }
        #expect(levels["data"]?["levels"] == [["user": "speaker", "level": 76, "vad": true]])
        #expect(levels["seq"] == nil)
        try await listener.event("speaker.levels") { $0["data"]?["levels"] == [] }

        // Not seated, no publish grant, or spoofing the speaker's SSRC from another address: dropped.
        try intruderMedia.send([66])
        try quietMedia.send([77])
        let spoof = RTPPacket(payloadType: 111, sequenceNumber: 999, timestamp: 1, ssrc: speakerMedia.ssrc, payload: [88])
        intruderMedia.socket.send(try SRTPSession(key: speakerMedia.key, direction: .outbound).protect(rtp: spoof.serialized()), to: intruderMedia.server)
        try hostMedia.send([100])
        #expect(try listenerMedia.receive(until: [100]).isEmpty)

        // Host mute silences the seat at once; unmuting brings it back.
        try await host.call("seat.mute", room: "stage", ["index": 1, "muted": true])
        try speakerMedia.send([4])
        try hostMedia.send([101])
        #expect(try listenerMedia.receive(until: [101]).isEmpty)
        try await host.call("seat.mute", room: "stage", ["index": 1, "muted": false])
        try speakerMedia.send([5])
        #expect(try listenerMedia.receive()?.payload == [5])

        // Mic off, and leaving the seat, stop forwarding too.
        try await speaker.call("mic.set", room: "stage", ["on": false])
        try speakerMedia.send([6])
        try hostMedia.send([102])
        #expect(try listenerMedia.receive(until: [102]).isEmpty)
    }

    @Test func networkQualityFromSequenceGapsAndReceiverReports() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        let speaker = try await TestClient.signedIn(server, user: "speaker")
        let listener = try await TestClient.signedIn(server, user: "listener")
        _ = try await host.call("room.create", room: "net")
        let speakerMedia = try RawMediaClient(snapshot: try await speaker.call("room.join", room: "net"))
        let listenerMedia = try RawMediaClient(snapshot: try await listener.call("room.join", room: "net"))
        #expect(speakerMedia.bind() && listenerMedia.bind())
        try await speaker.call("seat.take", room: "net", ["index": 0])
        // The speaker's uplink loses about 30%: every third sequence number never arrives.
        for index in 0..<60 {
            if index % 3 == 2 { speakerMedia.sequence &+= 1 } else { try speakerMedia.send([UInt8(index)]) }
        }
        // The listener reports hearing everything.
        let report = RTCPPacket.serializeCompound([.receiverReport(ssrc: listenerMedia.ssrc, reports: [
            RTCPReportBlock(ssrc: speakerMedia.ssrc, fractionLost: 0, cumulativeLost: 0, highestSequence: 60, jitter: 0),
        ])])
        listenerMedia.socket.send(try listenerMedia.outbound.protect(rtcp: report), to: listenerMedia.server)
        // The seated speaker's quality goes to everyone; the listener's to the listener alone.
        // (A report made while the packets were still arriving, before a gap showed, may say
        // less: the one that counts them all says "down", 33% lost.)
        let bad = try await host.event("network.quality", timeout: 30) { $0["data"]?["user"] == "speaker" && $0["data"]?["up"] == "down" }
        #expect(bad["data"]?["down"] != nil)
        let good = try await listener.event("network.quality", timeout: 30) { $0["data"]?["user"] == "listener" }
        #expect(good["data"] == ["user": "listener", "up": "excellent", "down": "excellent"])
        // A second round of reports reaches the listener: by then the first round was queued to
        // the host, and the host's answer to a ping comes after it on its connection.
        listenerMedia.socket.send(try listenerMedia.outbound.protect(rtcp: report), to: listenerMedia.server)
        try await listener.event("network.quality", timeout: 30) { $0["data"]?["user"] == "listener" }
        _ = try await host.request("ping")
        #expect(!host.pendingEvents.contains { $0["ev"] == "network.quality" && $0["data"]?["user"] == "listener" })
        #expect(!speaker.pendingEvents.contains { $0["ev"] == "network.quality" && $0["data"]?["user"] == "listener" })
    }

    /// Each leg is repaired on its own: the server rebuilds what its uplink lost from redundant
    /// copies and sends it on, asks the speaker for the rest, and answers a listener's NACK from
    /// its cache to that listener alone. RED goes to those who said they decode it; the others
    /// get the primary frame as plain Opus.
    @Test func lossIsRepairedPerLegAndRedundancyReachesOnlyThoseWhoDecodeIt() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        let speaker = try await TestClient.signedIn(server, user: "speaker")
        let plain = try await TestClient.signedIn(server, user: "plain")
        let snapshot = try await host.call("room.create", room: "repair")
        #expect(snapshot["media"]?["redPayloadType"] == 63)
        let redMedia = try RawMediaClient(snapshot: snapshot)
        let speakerMedia = try RawMediaClient(snapshot: try await speaker.call("room.join", room: "repair"))
        let plainMedia = try RawMediaClient(snapshot: try await plain.call("room.join", room: "repair"))
        #expect(redMedia.bind(receivesRED: true) && speakerMedia.bind() && plainMedia.bind())
        try await speaker.call("seat.take", room: "repair", ["index": 0])
        try await plain.event("seat.updated") { $0["data"]?["seats"]?.arrayValue?.first?["user"] == "speaker" }

        // Sequence 1, then 4 carrying 3 as redundancy: 2 and 3 never arrived on the uplink.
        try speakerMedia.send([1], sequence: 1, payloadType: 111)
        let red = REDPayload(redundant: [.init(payloadType: 111, timestampOffset: 960, data: [3])], primaryPayloadType: 111, primary: [4])
        try speakerMedia.send(red.serialized(), sequence: 4, payloadType: 63)
        // (A sender report may come first.)
        var asked: [RTCPPacket] = []
        while !asked.contains(where: { if case .nack = $0 { return true } else { return false } }), let packets = try speakerMedia.receiveControl() {
            asked += packets
        }
        #expect(asked.contains(.nack(ssrc: 1, mediaSSRC: speakerMedia.ssrc, lost: [2])))

        // Both listeners get 3 rebuilt from its copy, after 4 (and the speaker is asked only for 2).
        let redHeard = try (0..<3).map { _ in try #require(try redMedia.receive()) }
        #expect(redHeard.map(\.sequenceNumber) == [1, 4, 3] && redHeard.map(\.payloadType) == [111, 63, 111])
        #expect(redHeard[1].payload == red.serialized() && redHeard[2].payload == [3])
        #expect(redHeard[2].timestamp == redHeard[1].timestamp &- 960)
        let plainHeard = try (0..<3).map { _ in try #require(try plainMedia.receive()) }
        #expect(plainHeard.map(\.payloadType) == [111, 111, 111] && plainHeard.map(\.payload) == [[1], [4], [3]])

        // The plain listener lost 4 on its downlink (it forgets having had it) and asks: only it
        // gets 4 again.
        plainMedia.inbound = try SRTPSession(key: plainMedia.key, direction: .inbound)
        try plainMedia.sendControl([.nack(ssrc: plainMedia.ssrc, mediaSSRC: speakerMedia.ssrc, lost: [4])])
        let again = try #require(try plainMedia.receive())
        #expect(again.sequenceNumber == 4 && again.payload == [4] && again.payloadType == 111)
        try speakerMedia.send([5], sequence: 5, payloadType: 111)
        #expect(try redMedia.receive()?.sequenceNumber == 5)

        // The speaker's report: two of its five packets lost on the uplink (one rebuilt, but the
        // loss is what the speaker protects against).
        var block: RTCPReportBlock?
        while block == nil, let packets = try speakerMedia.receiveControl() {
            for case .senderReport(1, _, _, _, _, let blocks) in packets { block = blocks.first { $0.ssrc == speakerMedia.ssrc } }
        }
        let fraction = Double(try #require(block).fractionLost) / 256
        #expect(fraction > 0.3 && fraction < 0.5, "reported \(fraction)")
    }

    /// The round trip counts too: a member answering the server's sender report 400 ms late has
    /// a "poor" network (300-500 ms; worse if this busy machine slept longer) even with no loss.
    @Test func networkQualityCountsTheRoundTrip() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let host = try await TestClient.signedIn(server, user: "host")
        let far = try await TestClient.signedIn(server, user: "far")
        _ = try await host.call("room.create", room: "far")
        let media = try RawMediaClient(snapshot: try await far.call("room.join", room: "far"))
        #expect(media.bind())
        // The first report may have waited in the socket; the next one is read as it arrives.
        var reports: [UInt64] = []
        while reports.count < 2, let packets = try media.receiveControl() {
            for case .senderReport(1, let ntp, _, _, _, _) in packets { reports.append(ntp) }
        }
        let ntp = try #require(reports.last)
        try await Task.sleep(for: .milliseconds(400))
        try media.sendControl([.receiverReport(ssrc: media.ssrc, reports: [
            RTCPReportBlock(ssrc: 1, fractionLost: 0, cumulativeLost: 0, highestSequence: 0, jitter: 0,
                            lastSenderReport: UInt32(truncatingIfNeeded: ntp >> 16), delaySinceLastSenderReport: 0),
        ])])
        // A report made before the late answer was read (from the binding alone, excellent) may
        // come first; the next ones count the round trip (none within 30 s fails the test). At
        // least 400 ms: poor, or worse when the sender report waited in the socket before it was
        // read here (800 ms or more is "down").
        let quality = try await far.event("network.quality", timeout: 30) { event in
            event["data"]?["user"] == "far" && ["poor", "bad", "down"].contains(event["data"]?["down"]?.stringValue ?? "")
        }
        #expect(quality["data"]?["up"] == quality["data"]?["down"])
    }
}

extension RawMediaClient {
    /// A raw client for the member whose join answer is `snapshot`.
    convenience init(snapshot: JSONValue, receiveTimeoutMilliseconds: Int = 3_000) throws {
        let settings = try #require(MediaSettings(snapshot["media"]))
        #expect(settings.payloadType == 111 && settings.audioLevelExtension == 1)
        try self.init(settings: settings, receiveTimeoutMilliseconds: receiveTimeoutMilliseconds)
    }

    /// Packets until one whose payload is `marker`; returns those before it.
    func receive(until marker: [UInt8]) throws -> [RTPPacket] {
        var before: [RTPPacket] = []
        while let packet = try receive() {
            if packet.payload == marker { return before }
            before.append(packet)
        }
        throw TestClient.Timeout(description: "the marker never arrived")
    }
}
