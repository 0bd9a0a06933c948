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

    /// A 40 kb/s bottleneck with a 300 ms drop-tail queue, fed 51.2 kb/s (100-byte payloads plus 28
    /// bytes of headers every 20 ms): the queue fills to its limit, then packets leave at the link's
    /// rate and the excess is dropped on arrival; fed less than its rate, it only serializes.
    @Test func aThinLinkQueuesThenDropsTheExcess() {
        var link = PathImpairment(loss: 0, meanBurst: 1, delay: 20, jitter: 0, reorder: false, seed: 1, rate: 40_000, queueLimit: 300)
        let serialization = 128.0 * 8 / 40_000 * 1000  // 25.6 ms a packet
        var released: [Double] = []
        var maxWait = 0.0
        for step in 0..<3_000 {
            let now = Double(step) * 20
            let wait = link.queueDelay(at: now)
            if let at = link.release(at: now, bytes: 100) {
                maxWait = max(maxWait, wait)
                #expect(at - now <= 300 + serialization + 20 + 1e-9)
                released.append(at)
            }
        }
        // No packet that got in waited longer than the queue holds; the queue did fill.
        #expect(maxWait <= 300 && maxWait > 300 - serialization)
        #expect(abs(Double(link.queueDrops) / 3_000 - (1 - 40.0 / 51.2)) < 0.02, "\(link.queueDrops)")
        // Back to back at the link's rate once the queue is full, in order.
        let gaps = zip(released.dropFirst(), released).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= serialization - 1e-9 })
        #expect(abs(gaps.suffix(1_000).reduce(0, +) / 1_000 - serialization) < 0.5)

        var roomy = PathImpairment(loss: 0, meanBurst: 1, delay: 20, jitter: 0, reorder: false, seed: 1, rate: 64_000)
        for step in 0..<1_000 {
            let now = Double(step) * 20
            let at = roomy.release(at: now, bytes: 100)
            #expect(at != nil && abs(at! - now - (128.0 * 8 / 64_000 * 1000 + 20)) < 1e-9)
        }
        #expect(roomy.queueDrops == 0)
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
