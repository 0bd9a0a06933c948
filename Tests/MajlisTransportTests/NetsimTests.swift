import MajlisProtocol
import Foundation
import MajlisTransport
import Testing

@Suite struct NetsimTests {
    @Test func randomAndBurstyLossHaveTheAskedStatistics() {
        var random = SplitMix64(seed: 7)
        var plain = GilbertElliott(loss: 0.2)
        let drops = (0..<100_000).filter { _ in plain.drops(random: random.unit()) }.count
        #expect(abs(Double(drops) / 100_000 - 0.2) < 0.01)

        var bursty = GilbertElliott(loss: 0.1, meanBurst: 3)
        var lost = 0
        var bursts = 0
        var inBurst = false
        for _ in 0..<200_000 {
            let drop = bursty.drops(random: random.unit())
            if drop { lost += 1 }
            if drop && !inBurst { bursts += 1 }
            inBurst = drop
        }
        #expect(abs(Double(lost) / 200_000 - 0.1) < 0.01)
        #expect(abs(Double(lost) / Double(bursts) - 3) < 0.2)
    }

    @Test func delayKeepsOrderUnlessReorderingIsAllowed() {
        var ordered = PathImpairment(loss: 0, meanBurst: 1, delay: 40, jitter: 20, reorder: false, seed: 3)
        var last = 0.0
        for step in 0..<1_000 {
            let now = Double(step) * 20
            let at = ordered.release(at: now)!
            #expect(at >= now + 20 && at >= last)
            last = at
        }
        var loose = PathImpairment(loss: 0, meanBurst: 1, delay: 40, jitter: 20, reorder: true, seed: 3)
        let times = (0..<1_000).map { loose.release(at: Double($0) * 5)! }
        #expect(zip(times, times.dropFirst()).contains { $0 > $1 })
        #expect(times.enumerated().allSatisfy { $1 >= Double($0) * 5 + 20 && $1 <= Double($0) * 5 + 60 })
        // The same seed gives the same run.
        var again = PathImpairment(loss: 0, meanBurst: 1, delay: 40, jitter: 20, reorder: true, seed: 3)
        #expect((0..<1_000).map { again.release(at: Double($0) * 5)! } == times)
    }

    @Test func relayLosesWhatItIsToldAndPassesTheRest() throws {
        let server = try UDPSocket(host: "127.0.0.1", port: 0, receiveTimeoutMilliseconds: 500)
        let relay = try NetworkSimulator(
            host: "127.0.0.1", port: 0, upstream: UDPAddress(host: "127.0.0.1", port: server.port)!,
            settings: NetworkSimulator.Settings(loss: 0.25, seed: 11))
        defer { relay.stop() }
        let client = try UDPSocket(host: "127.0.0.1", port: 0, receiveTimeoutMilliseconds: 500)
        let relayAddress = UDPAddress(host: "127.0.0.1", port: relay.listener.port)!
        for index in 0..<2_000 { client.send([UInt8(index & 0xFF), UInt8(index >> 8)], to: relayAddress) }
        var buffer = [UInt8](repeating: 0, count: 64)
        var arrived = 0
        var from: UDPAddress?
        while let (_, sender) = server.receive(into: &buffer) {
            arrived += 1
            from = sender
        }
        #expect(abs(Double(arrived) / 2_000 - 0.75) < 0.04)
        #expect(relay.counted.up.sent == arrived)
        // Answers go back through the relay to the client.
        if let from { for _ in 0..<200 { server.send([1], to: from) } }
        var back = 0
        while client.receive(into: &buffer) != nil { back += 1 }
        #expect(back > 100 && back < 200)
    }
}
