import MajlisProtocol
import Testing

@testable import MajlisForwarding
@testable import MajlisTransport

/// The router's state machine driven without sockets: datagrams and time in, recorded
/// datagrams out.
@Suite struct MediaRouterCoreTests {
    /// Everything the router sent, in order.
    struct Recorder: RouterOutput {
        var sent: [(bytes: [UInt8], to: UDPAddress)] = []
        private var copies: [(bytes: [UInt8], to: UDPAddress)] = []
        private var slot = [UInt8](repeating: 0, count: 1_600)

        mutating func send(_ bytes: [UInt8], to address: UDPAddress) { sent.append((bytes, address)) }

        mutating func forward(to address: UDPAddress, _ fill: (UnsafeMutableRawBufferPointer) -> Int?) {
            guard let length = slot.withUnsafeMutableBytes(fill) else { return }
            copies.append((Array(slot.prefix(length)), address))
        }

        mutating func flush() -> Int {
            defer { copies = [] }
            sent += copies
            return copies.count
        }

        mutating func take() -> [(bytes: [UInt8], to: UDPAddress)] {
            defer { sent = [] }
            return sent
        }
    }

    /// A member as a client sees itself: its SSRC, key, address and SRTP contexts.
    struct Member {
        let user: String
        let ssrc: UInt32
        let key = HMACSHA256.randomBytes(SRTPSession.keyLength)
        let address: UDPAddress
        let outbound: SRTPSession
        let inbound: SRTPSession
        var sequence: UInt16 = 0

        init(_ user: String, ssrc: UInt32, port: Int) throws {
            self.user = user
            self.ssrc = ssrc
            address = UDPAddress(host: "127.0.0.1", port: port)!
            outbound = try SRTPSession(key: key, direction: .outbound)
            inbound = try SRTPSession(key: key, direction: .inbound)
        }

        var join: RouterCommand { .join(room: "r", user: user, ssrc: ssrc, key: key) }

        /// The next packet (timestamp: 960 a sequence number, unless given).
        mutating func packet(payloadType: UInt8 = 111, payload: [UInt8] = [1, 2, 3], level: UInt8 = 30, voice: Bool = true, timestamp: UInt32? = nil) throws -> [UInt8] {
            sequence &+= 1
            let rtp = RTPPacket(
                payloadType: payloadType, sequenceNumber: sequence, timestamp: timestamp ?? UInt32(sequence) &* 960, ssrc: ssrc,
                extensions: [RTPPacket.audioLevelExtension(id: 1, voice: voice, level: level)], payload: payload)
            return try outbound.protect(rtp: rtp.serialized())
        }
    }

    let core = MediaRouterCore()
    var output = Recorder()
    var now = 1_000_000.0

    mutating func deliver(_ bytes: [UInt8], from: UDPAddress) -> [(bytes: [UInt8], to: UDPAddress)] {
        var buffer = bytes + [UInt8](repeating: 0, count: 64)
        core.receive(&buffer, length: bytes.count, from: from, now: now, output: &output)
        return output.take()
    }

    /// Binds `member` as a client does: a binding, the challenge, the binding with the nonce.
    mutating func bind(_ member: Member, receivesRED: Bool = false, receivesMultiframe: Bool = false) -> Bool {
        var binding = MediaBinding(ssrc: member.ssrc, key: member.key, receivesRED: receivesRED, receivesMultiframe: receivesMultiframe)
        for _ in 0..<2 {
            let answers = deliver(binding.request(transactionId: MediaBinding.transactionId()), from: member.address)
            guard answers.count == 1, answers[0].to == member.address else { return false }
            switch binding.receive(answers[0].bytes) {
            case .bound: return true
            case .challenged: continue
            case .ignored: return false
            }
        }
        return false
    }

    @Test mutating func aMemberIsHeardOnlyOnceBoundAndAllowed() throws {
        var speaker = try Member("s", ssrc: 100, port: 5000)
        let listener = try Member("l", ssrc: 200, port: 5001)
        core.apply(speaker.join)
        core.apply(listener.join)
        #expect(deliver(try speaker.packet(), from: speaker.address).isEmpty)
        #expect(core.counters.droppedUnbound == 1)
        #expect(bind(speaker) && bind(listener))
        #expect(core.counters.challenges == 2 && core.counters.bindings == 2)
        #expect(deliver(try speaker.packet(), from: speaker.address).isEmpty, "not a speaker yet")
        #expect(core.counters.droppedNotAllowed == 1)
        core.apply(.setSpeakers(room: "r", seats: ["s": 0]))
        let copies = deliver(try speaker.packet(payload: [8, 8, 7]), from: speaker.address)
        try #require(copies.count == 1)
        #expect(copies[0].to == listener.address)
        let heard = try RTPPacket(parsing: try listener.inbound.unprotect(srtp: copies[0].bytes))
        #expect(heard.ssrc == speaker.ssrc && heard.payload == [8, 8, 7])
        #expect(core.takeLevels()["r"]?.first == SpeakerLevel(user: "s", level: 76, vad: true))
        // A packet claiming the speaker's SSRC from elsewhere, and a speaker who left, are not heard.
        #expect(deliver(try speaker.packet(), from: listener.address).isEmpty)
        core.apply(.leave(room: "r", user: "s"))
        #expect(deliver(try speaker.packet(), from: speaker.address).isEmpty)
        #expect(core.counters.droppedUnbound == 3 && core.counters.forwarded == 1)
    }

    @Test mutating func aRejoinRotatesTheSSRCAndDropsTheOldRights() throws {
        let first = try Member("s", ssrc: 100, port: 5000)
        var second = try Member("s", ssrc: 101, port: 5000)
        let listener = try Member("l", ssrc: 200, port: 5001)
        for command in [first.join, listener.join, .setSpeakers(room: "r", seats: ["s": 0]), second.join] { core.apply(command) }
        #expect(core.memberCount == 2)
        #expect(bind(second) && bind(listener))
        #expect(deliver(try second.packet(), from: second.address).isEmpty, "rights were for the old SSRC")
        core.apply(.setSpeakers(room: "r", seats: ["s": 0]))
        #expect(deliver(try second.packet(), from: second.address).count == 1)
    }

    /// While someone speaks, the copies follow the room: a member who joins gets the next packet,
    /// one who left gets none, and one who rejoined gets them at its new SSRC's key only.
    @Test mutating func copiesFollowTheRoomAsMembersComeAndGo() throws {
        var speaker = try Member("s", ssrc: 100, port: 5000)
        let first = try Member("a", ssrc: 200, port: 5001)
        let late = try Member("b", ssrc: 300, port: 5002)
        let again = try Member("a", ssrc: 201, port: 5003)
        for command in [speaker.join, first.join, .setSpeakers(room: "r", seats: ["s": 0])] { core.apply(command) }
        #expect(bind(speaker) && bind(first))
        func copies() throws -> [UDPAddress] {
            deliver(try speaker.packet(), from: speaker.address).map(\.to).filter { $0 != speaker.address }.sorted { $0.port < $1.port }
        }
        #expect(try copies() == [first.address])
        core.apply(late.join)
        #expect(try copies() == [first.address], "not bound yet")
        #expect(bind(late))
        #expect(try copies() == [first.address, late.address])
        core.apply(.leave(room: "r", user: "b"))
        #expect(try copies() == [first.address])
        core.apply(again.join)
        #expect(try copies().isEmpty, "the new SSRC is not bound yet, the old one is gone")
        #expect(bind(again))
        let copy = try #require(deliver(try speaker.packet(payload: [4, 4]), from: speaker.address).first { $0.to == again.address })
        #expect(try RTPPacket(parsing: try again.inbound.unprotect(srtp: copy.bytes)).payload == [4, 4])
    }

    @Test mutating func redReachesOnlyThoseWhoDecodeIt() throws {
        var speaker = try Member("s", ssrc: 100, port: 5000)
        let plain = try Member("p", ssrc: 200, port: 5001)
        let red = try Member("d", ssrc: 300, port: 5002)
        for command in [speaker.join, plain.join, red.join, .setSpeakers(room: "r", seats: ["s": 0])] { core.apply(command) }
        #expect(bind(speaker) && bind(plain) && bind(red, receivesRED: true))
        let redPayload = REDPayload(redundant: [.init(payloadType: 111, timestampOffset: 960, data: [6, 6])], primaryPayloadType: 111, primary: [7, 7])
        let copies = deliver(try speaker.packet(payloadType: 63, payload: redPayload.serialized()), from: speaker.address)
        try #require(copies.count == 2)
        for copy in copies {
            let member = copy.to == red.address ? red : plain
            let rtp = try RTPPacket(parsing: try member.inbound.unprotect(srtp: copy.bytes))
            if member.user == "d" {
                #expect(rtp.payloadType == 63 && rtp.payload == redPayload.serialized())
            } else {
                #expect(rtp.payloadType == 111 && rtp.payload == [7, 7])
            }
        }
    }

    @Test mutating func packetsOfSeveralFramesReachOnlyThoseWhoPlayThem() throws {
        var speaker = try Member("s", ssrc: 100, port: 5000)
        let old = try Member("o", ssrc: 200, port: 5001)
        let new = try Member("n", ssrc: 300, port: 5002)
        for command in [speaker.join, old.join, new.join, .setSpeakers(room: "r", seats: ["s": 0])] { core.apply(command) }
        #expect(bind(speaker, receivesMultiframe: true) && bind(old) && bind(new, receivesMultiframe: true))
        // TOC 0x0B: SILK 20 ms, code 3; then three frames.
        let joined = deliver(try speaker.packet(payload: [0x0B, 0x03, 1, 2, 3]), from: speaker.address)
        #expect(joined.map(\.to) == [new.address])
        #expect(core.counters.droppedUnsupported == 1)
        // Nor is it sent again to a member who asks for it.
        let asked = try old.outbound.protect(rtcp: RTCPPacket.serializeCompound([.nack(ssrc: old.ssrc, mediaSSRC: speaker.ssrc, lost: [speaker.sequence])]))
        #expect(deliver(asked, from: old.address).isEmpty)
        // One frame (TOC 0x08: SILK 20 ms, code 0) goes to both.
        #expect(deliver(try speaker.packet(payload: [0x08, 1, 2]), from: speaker.address).count == 2)
        // A speaker that does not join frames itself is forwarded to all as it always was,
        // whatever its packets' length (a client written before the attribute, say 40 ms ones).
        core.apply(.setSpeakers(room: "r", seats: ["s": 0, "o": 1]))
        var older = old
        #expect(deliver(try older.packet(payload: [0x0B, 0x03, 1, 2, 3]), from: old.address).count == 2)
        #expect(core.counters.droppedUnsupported == 1)
    }

    /// A frame the speaker's uplink lost is rebuilt from a later packet's redundant copy and sent
    /// on as a packet of its own, carrying its own copies of the frames before it; a listener
    /// that asks for it gets it from the cache.
    /// Two copies (two and four frames back) and three (six too, on a long round trip).
    @Test(arguments: [[4, 2], [6, 4, 2]])
    mutating func framesLostOnTheUplinkAreRebuiltFromRedundancy(distances: [Int]) throws {
        var speaker = try Member("s", ssrc: 100, port: 5000)
        let listener = try Member("l", ssrc: 200, port: 5001)
        for command in [speaker.join, listener.join, .setSpeakers(room: "r", seats: ["s": 0])] { core.apply(command) }
        #expect(bind(speaker) && bind(listener, receivesRED: true))
        // Packet n carries frame n ([n, n]) and copies of frames `distances` before it.
        func red(_ n: Int) -> [UInt8] {
            let copies = distances.filter { n - $0 >= 1 }.map { REDPayload.Block(payloadType: 111, timestampOffset: UInt16($0 * 960), data: [UInt8(n - $0), UInt8(n - $0)]) }
            return REDPayload(redundant: copies, primaryPayloadType: 111, primary: [UInt8(n), UInt8(n)]).serialized()
        }
        var heard: [RTPPacket] = []
        for n in 1...11 {
            let packet = try speaker.packet(payloadType: 63, payload: red(n))
            guard n != 7 else { continue }  // lost on the uplink
            for copy in deliver(packet, from: speaker.address) {
                if copy.to == listener.address { heard.append(try RTPPacket(parsing: try listener.inbound.unprotect(srtp: copy.bytes))) }
            }
        }
        #expect(heard.map(\.sequenceNumber) == [1, 2, 3, 4, 5, 6, 8, 9, 7, 10, 11].map { speaker.sequence &- 11 &+ UInt16($0) })
        let rebuilt = try #require(heard.first { $0.sequenceNumber == speaker.sequence &- 4 })
        #expect(rebuilt.timestamp == UInt32(rebuilt.sequenceNumber) &* 960)
        let parsed = try REDPayload(parsing: rebuilt.payload)
        #expect(parsed.primary == [7, 7])
        #expect(parsed.redundant.map(\.data) == distances.map { [UInt8(7 - $0), UInt8(7 - $0)] })
        #expect(parsed.redundant.map(\.timestampOffset) == distances.map { UInt16($0 * 960) })
        #expect(core.counters.recoveredFromRedundancy == 1)
        let nack = try SRTPSession(key: listener.key, direction: .outbound).protect(
            rtcp: RTCPPacket.serializeCompound([.nack(ssrc: listener.ssrc, mediaSSRC: speaker.ssrc, lost: [rebuilt.sequenceNumber])]))
        let repairs = deliver(nack, from: listener.address)
        try #require(repairs.count == 1)
        let fresh = try SRTPSession(key: listener.key, direction: .inbound)  // the listener's own would call it a replay
        #expect(try RTPPacket(parsing: try fresh.unprotect(srtp: repairs[0].bytes)).payload == rebuilt.payload)
    }

    /// A client skipping sequence numbers to have the router "rebuild" frames from its RED
    /// copies: sixteen copies a packet rebuild nothing; three rebuild nothing where the
    /// timestamps say no packet could have been lost between; where they move on as a real
    /// gap's would, at most three frames a packet are rebuilt. (Before, every skipped number
    /// was rebuilt: 16 packets forwarded for each received.)
    @Test(arguments: [(16, false), (3, false), (3, true)])
    mutating func onlyGapsAStreamCouldHaveAreRebuiltFromRedundancy(copies: Int, timestampsFollow: Bool) throws {
        var speaker = try Member("s", ssrc: 100, port: 5000)
        let listener = try Member("l", ssrc: 200, port: 5001)
        for command in [speaker.join, listener.join, .setSpeakers(room: "r", seats: ["s": 0])] { core.apply(command) }
        #expect(bind(speaker) && bind(listener, receivesRED: true))
        var timestamp: UInt32 = 0
        var received = 0
        for _ in 0..<40 {
            speaker.sequence &+= 16
            timestamp &+= timestampsFollow ? 17 * 960 : 960
            let blocks = (1...copies).map { REDPayload.Block(payloadType: 111, timestampOffset: UInt16($0 * 960), data: [UInt8($0), 0]) }
            let red = REDPayload(redundant: blocks, primaryPayloadType: 111, primary: [0x08, 1]).serialized()
            received += deliver(try speaker.packet(payloadType: 63, payload: red, timestamp: timestamp), from: speaker.address).filter { $0.to == listener.address }.count
            now += 20
        }
        #expect(core.counters.recoveredFromRedundancy == (timestampsFollow ? 39 * 3 : 0))
        #expect(received == 40 + core.counters.recoveredFromRedundancy)
    }

    /// A seated member sending 1,200-byte packets a thousand a second (9.6 Mb/s) has at most its
    /// forwarding budget sent on (640 kb/s after a two-second burst), the rest dropped and
    /// counted; stereo music with three RED copies in every packet, the most our clients
    /// send, loses nothing to it.
    @Test mutating func aSpeakerIsForwardedAtMostItsBudget() throws {
        var flood = try Member("f", ssrc: 100, port: 5000)
        var music = try Member("m", ssrc: 300, port: 5002)
        let listener = try Member("l", ssrc: 200, port: 5001)
        for command in [flood.join, music.join, listener.join, .setSpeakers(room: "r", seats: ["f": 0, "m": 1])] { core.apply(command) }
        #expect(bind(flood) && bind(music) && bind(listener, receivesRED: true))
        var bytes = [100: 0, 300: 0]
        var musicPackets = 0
        let start = now
        for tick in 0..<10_000 {  // ten seconds, a millisecond a tick
            for copy in deliver(try flood.packet(payload: [0x08] + [UInt8](repeating: 7, count: 1_199)), from: flood.address) where copy.to == listener.address {
                bytes[100, default: 0] += copy.bytes.count
            }
            if tick % 20 == 0 {
                // 96 kb/s: 240 bytes a frame, and copies of three earlier ones.
                let blocks = [6, 4, 2].map { REDPayload.Block(payloadType: 111, timestampOffset: UInt16($0 * 960), data: [UInt8](repeating: 1, count: 240)) }
                let red = REDPayload(redundant: blocks, primaryPayloadType: 111, primary: [0x08] + [UInt8](repeating: 2, count: 239)).serialized()
                for copy in deliver(try music.packet(payloadType: 63, payload: red), from: music.address) where copy.to == listener.address {
                    bytes[300, default: 0] += copy.bytes.count
                    musicPackets += 1
                }
            }
            now += 1
        }
        let seconds = (now - start) / 1000
        let allowed = Double(ForwardingBudget.bytesPerSecond) * (seconds + Double(ForwardingBudget.burstSeconds))
        #expect(Double(bytes[100]!) <= allowed * 1.05, "\(bytes[100]!) bytes forwarded in \(seconds) s")
        #expect(Double(bytes[100]!) >= Double(ForwardingBudget.bytesPerSecond) * seconds * 0.9, "the budget itself is forwarded")
        #expect(musicPackets == 500, "\(musicPackets) of 500 packets of music forwarded (\(bytes[300]!) bytes)")
        #expect(core.counters.droppedOverBudget >= 9_000)
        #expect(core.counters.droppedOverBudget < 10_000)  // only the flood's packets
    }

    @Test mutating func nackRepairIsAnsweredFromTheCacheWithinTheBudget() throws {
        var speaker = try Member("s", ssrc: 100, port: 5000)
        let listener = try Member("l", ssrc: 200, port: 5001)
        for command in [speaker.join, listener.join, .setSpeakers(room: "r", seats: ["s": 0])] { core.apply(command) }
        #expect(bind(speaker) && bind(listener))
        for _ in 0..<100 { _ = deliver(try speaker.packet(), from: speaker.address) }
        let nack = RTCPPacket.serializeCompound([.nack(ssrc: listener.ssrc, mediaSSRC: speaker.ssrc, lost: Array(1...100) + [5, 5, 5])])
        let listenerOut = try SRTPSession(key: listener.key, direction: .outbound)
        let repairs = deliver(try listenerOut.protect(rtcp: nack), from: listener.address)
        #expect(repairs.count == MediaRouterCore.repairBudget, "the burst, each sequence once")
        #expect(core.counters.repairsRefused == 1)
        let first = try RTPPacket(parsing: try listener.inbound.unprotect(srtp: repairs[0].bytes))
        #expect(first.sequenceNumber == 1 && first.ssrc == speaker.ssrc)
        // A second later the budget has refilled by a second of the stream.
        now += 1_000
        let later = deliver(try listenerOut.protect(rtcp: RTCPPacket.serializeCompound([.nack(ssrc: listener.ssrc, mediaSSRC: speaker.ssrc, lost: Array(51...100))])), from: listener.address)
        #expect(later.count == 50)
    }

    @Test mutating func uplinkLossIsAskedForAndReportedBack() throws {
        var speaker = try Member("s", ssrc: 100, port: 5000)
        let listener = try Member("l", ssrc: 200, port: 5001)
        for command in [speaker.join, listener.join, .setSpeakers(room: "r", seats: ["s": 0])] { core.apply(command) }
        #expect(bind(speaker) && bind(listener))
        var nacked: [UInt16] = []
        for index in 0..<50 {
            let packet = try speaker.packet()
            now += 20
            guard index % 5 != 2 else { continue }  // every fifth packet lost on the way up
            for answer in deliver(packet, from: speaker.address) where answer.to == speaker.address {
                let plain = try speaker.inbound.unprotect(srtcp: answer.bytes)
                for case .nack(_, let media, let lost) in try RTCPPacket.parseCompound(plain) where media == speaker.ssrc { nacked += lost }
            }
        }
        #expect(Set(nacked).isSuperset(of: [3, 8, 13]), "the router asked the speaker again")
        core.sendReports(now: now, output: &output)
        let reports = output.take()
        #expect(reports.count == 2)
        let toSpeaker = try #require(reports.first { $0.to == speaker.address })
        let parsed = try RTCPPacket.parseCompound(try speaker.inbound.unprotect(srtcp: toSpeaker.bytes))
        guard case .senderReport(_, _, _, _, _, let blocks) = parsed.first else {
            Issue.record("no sender report")
            return
        }
        let loss = Double(try #require(blocks.first { $0.ssrc == speaker.ssrc }).fractionLost) / 256
        #expect(loss > 0.15 && loss < 0.25, "20% lost upstream: \(loss)")
        #expect(core.takeQuality()["r"]?.map(\.user) == ["s"])
    }

    /// A speaker is told the worst loss its listeners report; a listener that stopped reporting
    /// (its network gone, say) stops counting after a few seconds.
    @Test mutating func aListenersReportedLossCountsUntilItFallsSilent() throws {
        var speaker = try Member("s", ssrc: 100, port: 5000)
        let lossy = try Member("a", ssrc: 200, port: 5001)
        let clear = try Member("b", ssrc: 300, port: 5002)
        for command in [speaker.join, lossy.join, clear.join, .setSpeakers(room: "r", seats: ["s": 0])] { core.apply(command) }
        #expect(bind(speaker) && bind(lossy) && bind(clear))
        func report(_ member: Member, lost: UInt8) throws {
            let block = RTCPReportBlock(ssrc: speaker.ssrc, fractionLost: lost, cumulativeLost: 0, highestSequence: UInt32(speaker.sequence), jitter: 0)
            _ = deliver(try member.outbound.protect(rtcp: RTCPPacket.serializeCompound([.receiverReport(ssrc: member.ssrc, reports: [block])])), from: member.address)
        }
        /// A second of speech, the listeners' reports, and the loss the speaker is then told of.
        func second(lossyReports: Bool) throws -> Double {
            for _ in 0..<50 {
                now += 20
                _ = deliver(try speaker.packet(), from: speaker.address)
            }
            if lossyReports { try report(lossy, lost: 64) }  // a quarter lost
            try report(clear, lost: 0)
            core.sendReports(now: now, output: &output)
            let toSpeaker = try #require(output.take().first { $0.to == speaker.address })
            guard case .senderReport(_, _, _, _, _, let blocks) = try RTCPPacket.parseCompound(try speaker.inbound.unprotect(srtcp: toSpeaker.bytes)).first else {
                Issue.record("no sender report")
                return -1
            }
            return Double(try #require(blocks.first { $0.ssrc == speaker.ssrc }).fractionLost) / 256
        }
        #expect(try second(lossyReports: true) == 0.25)
        // The lossy listener falls silent: its last report still counts for a few seconds, then not.
        var told: [Double] = []
        for _ in 0..<7 { told.append(try second(lossyReports: false)) }
        #expect(told == [0.25, 0.25, 0.25, 0.25, 0.25, 0, 0])
    }

    /// A speaker's uplink losing a burst mid-speech is asked for what it sent while the burst
    /// lasts (not once a packet after it shows the gap); a speaker that paused is not.
    @Test mutating func aBurstOnTheUplinkIsAskedForWhileItLasts() throws {
        var speaker = try Member("s", ssrc: 100, port: 5000)
        let listener = try Member("l", ssrc: 200, port: 5001)
        for command in [speaker.join, listener.join, .setSpeakers(room: "r", seats: ["s": 0])] { core.apply(command) }
        #expect(bind(speaker) && bind(listener))
        func asked(_ answers: [(bytes: [UInt8], to: UDPAddress)]) throws -> [UInt16] {
            var lost: [UInt16] = []
            for answer in answers where answer.to == speaker.address {
                for case .nack(_, let media, let missing) in try RTCPPacket.parseCompound(try speaker.inbound.unprotect(srtcp: answer.bytes)) where media == speaker.ssrc {
                    lost += missing
                }
            }
            return lost
        }
        for _ in 0..<10 {
            now += 20
            _ = deliver(try speaker.packet(), from: speaker.address)
        }
        // Packets 11 to 20 are lost; the router looks every 10 ms.
        var nacked: [UInt16] = []
        for _ in 0..<20 {
            now += 10
            core.askOverdue(now: now, output: &output)
            nacked += try asked(output.take())
        }
        // 11 is overdue 80 ms after 10 arrived (due at 20, and 60 ms of grace on a steady
        // path), then one more every 20 ms: seven in 200 ms, each asked for as soon as it is
        // overdue and once more 50 ms later (an ask may be lost too).
        #expect(Set(nacked) == Set(11...17), "\(nacked)")
        #expect(Array(nacked.prefix(4)) == [11, 12, 13, 11] && nacked.count { $0 == 11 } == 2, "\(nacked)")

        // A pause: the last packet was quiet, and silence follows.
        speaker.sequence = 30
        now += 20
        _ = deliver(try speaker.packet(voice: false), from: speaker.address)
        for _ in 0..<50 {
            now += 10
            core.askOverdue(now: now, output: &output)
            let answers = output.take()
            #expect(try asked(answers).allSatisfy { $0 <= 20 }, "nothing after the pause is asked for")
        }
    }

    /// A client's probe train (ten padded bindings, one every 20 ms) arriving through a 40 kb/s
    /// queue is answered with what the uplink carries before the first word; the same train on
    /// a fast path gets binding answers only.
    @Test mutating func aProbeTrainThroughAQueueIsToldWhatTheUplinkCarries() throws {
        let member = try Member("s", ssrc: 100, port: 5000)
        core.apply(member.join)
        #expect(bind(member))
        let binding = MediaBinding(ssrc: member.ssrc, key: member.key, receivesRED: false)
        for (rate, told) in [(40_000.0, true), (nil, false)] {
            var path = PathImpairment(loss: 0, meanBurst: 1, delay: 20, jitter: 0, reorder: false, seed: 1, rate: rate, queueLimit: 300)
            let start = now
            var estimates: [UInt64] = []
            for index in 0..<10 {
                let request = binding.probe(UplinkProbe(index: index, count: 10, sentAt: UInt32(index * 20)), transactionId: MediaBinding.transactionId(), size: 600)
                #expect(request.count == 600)
                guard let at = path.release(at: Double(index * 20), bytes: request.count) else { continue }
                now = start + at
                let answers = deliver(request, from: member.address)
                #expect(answers.first.map { STUNMessage.looksLikeSTUN($0.bytes) } == true, "each probe is answered as a binding")
                for answer in answers.dropFirst() {
                    for case .estimatedBitrate(_, let bitrate, let ssrcs) in try RTCPPacket.parseCompound(try member.inbound.unprotect(srtcp: answer.bytes)) {
                        #expect(ssrcs == [member.ssrc])
                        estimates.append(bitrate)
                    }
                }
            }
            if told {
                #expect(estimates.first.map { $0 >= 30_000 && $0 <= 36_000 } == true, "\(estimates)")
            } else {
                #expect(estimates.isEmpty, "\(estimates)")
            }
            now += 5_000
        }
    }

    @Test mutating func garbageOfEveryKindIsCountedAndDropped() throws {
        let member = try Member("s", ssrc: 100, port: 5000)
        core.apply(member.join)
        let samples: [[UInt8]] = [[], [0], [22, 254, 253, 0, 0], [0x80, 111, 0, 1], [0x80, 200, 0, 1, 0, 0, 0, 100, 9, 9], [0, 1, 0, 0] + [UInt8](repeating: 0, count: 16), [64, 64, 64]]
        for sample in samples { #expect(deliver(sample, from: member.address).isEmpty) }
        #expect(core.counters.droppedBadPacket == samples.count)
    }
}
