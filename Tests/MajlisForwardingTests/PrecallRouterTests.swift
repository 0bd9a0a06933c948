import MajlisProtocol
import Testing

@testable import MajlisForwarding
@testable import MajlisTransport

/// The router's pre-call tests (docs/protocol.md section 15), driven without sockets: the echo
/// test's audio comes back after its delay and only to its member; the probe's downlink train
/// goes out as scheduled and its uplink train is measured.
@Suite struct PrecallRouterTests {
    typealias Recorder = MediaRouterCoreTests.Recorder
    typealias Member = MediaRouterCoreTests.Member

    var harness = MediaRouterCoreTests()

    @Test mutating func theEchoComesBackAfterItsDelayUnderItsOwnSSRC() throws {
        var member = try Member("m", ssrc: 300, port: 6000)
        let bystander = try Member("b", ssrc: 301, port: 6001)
        harness.core.apply(.echoTest(test: "t1", user: "m", ssrc: member.ssrc, key: member.key, delay: 2_000))
        harness.core.apply(bystander.join)
        let bound = harness.bind(member) && harness.bind(bystander)
        #expect(bound)
        var ticked: [(bytes: [UInt8], to: UDPAddress)] = []
        func tick(_ harness: inout MediaRouterCoreTests) -> [(bytes: [UInt8], to: UDPAddress)] {
            harness.core.precallTick(now: harness.now, output: &harness.output)
            return harness.output.take()
        }
        ticked = tick(&harness)  // the test's clock starts
        #expect(ticked.isEmpty)
        for index in 0..<5 {
            let forwarded = harness.deliver(try member.packet(payload: [UInt8(index)]), from: member.address)
            #expect(forwarded.isEmpty, "nothing forwarded at once")
            harness.now += 20
        }
        harness.now += 1_899
        #expect(tick(&harness).isEmpty, "not yet: 1,999 ms after the first")
        harness.now += 1
        ticked = tick(&harness)
        try #require(ticked.count == 1)
        #expect(ticked[0].to == member.address)
        let echoed = try RTPPacket(parsing: try member.inbound.unprotect(srtp: ticked[0].bytes))
        #expect(echoed.ssrc == EchoLoop.echoSSRC(of: member.ssrc) && echoed.payload == [0])
        harness.now += 80
        #expect(tick(&harness).count == 4)
        // Stopped: what it sends is held no more, and the bystander never heard any of it.
        harness.core.apply(.leave(room: MediaRouterCore.precallRoom("t1"), user: "m"))
        let afterStop = harness.deliver(try member.packet(), from: member.address)
        #expect(afterStop.isEmpty)
        harness.now += 3_000
        #expect(tick(&harness).isEmpty)
        #expect(harness.core.counters.forwarded == 0)
    }

    /// An echo test holds at most its delay's worth of Opus at its top rate: 1,200-byte packets
    /// every millisecond for 2 s (9.6 MB/s) leave at most 127,500 bytes held, and those come back.
    @Test mutating func theEchoHoldsAtMostItsDelayAtOpussTopRate() throws {
        var member = try Member("m", ssrc: 330, port: 6030)
        harness.core.apply(.echoTest(test: "t4", user: "m", ssrc: member.ssrc, key: member.key, delay: 2_000))
        let bound = harness.bind(member)
        #expect(bound)
        harness.core.precallTick(now: harness.now, output: &harness.output)
        let byteBound = 2 * 510_000 / 8
        var sent = 0
        for _ in 0..<2_000 {
            _ = harness.deliver(try member.packet(payload: [UInt8](repeating: 7, count: 1_200)), from: member.address)
            sent += 1
            harness.now += 1
        }
        guard case .echo(let loop) = harness.core.participants[member.ssrc]?.precall else {
            Issue.record("no echo test runs")
            return
        }
        #expect(loop.heldBytes <= byteBound && loop.heldBytes > byteBound - 2_000, "\(loop.heldBytes) bytes held of \(sent) packets")
        let held = loop.held.count
        #expect(held < sent)
        harness.now += 2_000
        harness.core.precallTick(now: harness.now, output: &harness.output)
        #expect(harness.output.take().count == held, "what was held went back")
        #expect(loop.heldBytes == 0)
    }

    @Test mutating func theEchoTestEndsAfterAMinute() throws {
        var member = try Member("m", ssrc: 310, port: 6010)
        harness.core.apply(.echoTest(test: "t2", user: "m", ssrc: member.ssrc, key: member.key, delay: 2_000))
        let bound = harness.bind(member)
        #expect(bound)
        harness.core.precallTick(now: harness.now, output: &harness.output)
        harness.now += PrecallTest.lifetime + 10
        harness.core.precallTick(now: harness.now, output: &harness.output)
        _ = harness.deliver(try member.packet(), from: member.address)
        harness.now += 2_000
        harness.core.precallTick(now: harness.now, output: &harness.output)
        #expect(harness.output.take().isEmpty)
    }

    @Test mutating func theProbeSendsItsDownlinkTrainAndMeasuresTheUplink() throws {
        let member = try Member("m", ssrc: 320, port: 6020)
        harness.core.apply(.probe(test: "t3", user: "m", ssrc: member.ssrc, key: member.key, up: 400_000, down: 200_000))
        // Nothing goes down before the member's address is proven.
        harness.core.precallTick(now: harness.now, output: &harness.output)
        #expect(harness.output.take().isEmpty)
        let bound = harness.bind(member)
        #expect(bound)
        // The uplink train, every packet on time, over the whole probe; the downlink train
        // collected tick by tick, on a path that adds no delay.
        var uplink = ProbeSchedule(bitrate: 400_000)
        let outbound = member.outbound
        var downlink = ProbeMeter(bitrate: 200_000)
        let start = harness.now
        while harness.now - start < ProbeSchedule.duration + 100 {
            for (index, packet) in uplink.due(elapsed: harness.now - start) where index % 10 != 3 {  // one in ten lost
                var payload = [UInt8](repeating: 0, count: packet.size)
                payload[0] = packet.phase.rawValue
                let rtp = RTPPacket(payloadType: ProbeSchedule.payloadType, sequenceNumber: UInt16(index), timestamp: UInt32(packet.at * 48), ssrc: member.ssrc, payload: payload)
                _ = harness.deliver(try outbound.protect(rtp: rtp.serialized()), from: member.address)
            }
            harness.core.precallTick(now: harness.now, output: &harness.output)
            for (bytes, to) in harness.output.take() {
                #expect(to == member.address)
                let rtp = try RTPPacket(parsing: try member.inbound.unprotect(srtp: bytes))
                let phase = try #require(ProbeSchedule.Phase(rawValue: rtp.payload[0]))
                downlink.arrived(index: Int(rtp.sequenceNumber), phase: phase, sentAt: Double(rtp.timestamp) / 48, bytes: bytes.count + 28, at: harness.now)
            }
            // The server's media loop ticks every 10 ms.
            harness.now += 10
        }
        let down = downlink.figures
        // A perfect path shows no jitter, though the steady phase's packets are due every 5 ms.
        #expect(down.jitter < 0.5, "downlink jitter \(down.jitter) ms")
        #expect(down.received == ProbeSchedule(bitrate: 200_000).steadyCount + ProbeSchedule(bitrate: 200_000).capacityCount)
        #expect(down.loss == 0 && down.bandwidth == 200_000)
        let up = try #require(harness.core.probeFigures[member.ssrc])
        #expect(abs(up.loss - 0.1) < 0.01, "uplink loss \(up.loss)")
        #expect(up.bandwidth == 400_000, "the capacity phase kept up")
    }
}
