import MajlisTransport
import Testing

@Suite struct NackTrackerTests {
    @Test func asksForGapsThenAgainAfterARoundTripThenGivesUp() {
        var tracker = NackTracker()
        tracker.received(100, at: 0)
        tracker.received(104, at: 20)  // 101-103 missing
        #expect(tracker.due(at: 20) == [101, 102, 103])
        #expect(tracker.due(at: 30).isEmpty)  // asked already: wait a round trip
        tracker.received(102, at: 120)  // an answer, 100 ms after asking
        #expect(tracker.roundTrip < 200 && tracker.roundTrip > 100)
        let retry = tracker.retryInterval
        #expect(tracker.due(at: 20 + retry) == [101, 103])
        #expect(tracker.due(at: 20 + 2 * retry) == [101, 103])
        #expect(tracker.due(at: 20 + 3 * retry).isEmpty)  // three asks each, then given up
        #expect(tracker.missingCount == 0)
    }

    @Test func redundancyAndPlayoutStopTheAsking() {
        var tracker = NackTracker()
        tracker.redundancyReach = 4  // copies of a frame ride up to four packets later
        tracker.holdOff = 90
        tracker.received(65_535, at: 0)
        tracker.received(3, at: 20)  // wraps: 0, 1, 2 missing
        #expect(tracker.due(at: 30).isEmpty)  // redundancy in the next packets may fill them
        tracker.recovered(2)
        tracker.received(4, at: 40)  // 0 is now beyond any copy's reach; 1 not yet
        #expect(tracker.due(at: 40) == [0])
        #expect(tracker.due(at: 115) == [1])  // waited long enough
        // The player is past 1 already: nothing left to ask.
        #expect(tracker.due(at: 70 + tracker.retryInterval, oldestUseful: 2).isEmpty)
        // A packet that was never asked for is no retransmission; a jump too wide is not a gap.
        let answered = tracker.received(5, at: 80)
        #expect(!answered)
        tracker.received(500, at: 100)
        #expect(tracker.due(at: 200).isEmpty)
    }
}

@Suite struct ReceptionCounterTests {
    @Test func lossPerIntervalAndJitter() throws {
        var counter = ReceptionCounter()
        for sequence: UInt16 in 10..<20 where sequence != 13 && sequence != 17 {
            counter.count(sequence, timestamp: UInt32(sequence) * 960, arrival: Double(sequence) * 20 + (sequence % 2 == 0 ? 0 : 8))
        }
        let firstInterval = counter.takeInterval()
        let first = try #require(firstInterval)
        #expect(first.expected == 10 && first.lost == 2 && first.highest == 19)
        #expect(counter.jitter > 2 && counter.jitter < 8)
        // The next interval expects what follows the last one, even if its first packet is lost.
        counter.count(22)
        counter.count(23)
        let secondInterval = counter.takeInterval()
        let second = try #require(secondInterval)
        #expect(second.expected == 4 && second.lost == 2)
        let third = counter.takeInterval()
        #expect(third == nil)
    }
}

@Suite struct ProtectionPolicyTests {
    @Test func cleanPaysNothingAndLossBuysRedundancy() {
        var policy = ProtectionPolicy(bitrate: 32_000)
        #expect(policy.redundancy == 2, "unmeasured: protected")
        policy.update(loss: 0)
        #expect(!policy.fec && policy.redundancy == 0 && policy.bitrate == 32_000, "the first clean report turns it off")
        policy.update(loss: 0.02)
        #expect(policy.fec && policy.fecLossPercent == 2 && policy.redundancy == 0)
        policy.update(loss: 0.05)
        #expect(policy.redundancy == 1 && !policy.fec)
        policy.update(loss: 0.2)
        #expect(policy.redundancy == 2)
        // One clean report is not a clean network: loss falls slowly.
        policy.update(loss: 0)
        #expect(policy.redundancy == 2)
        for _ in 0..<20 { policy.update(loss: 0) }
        #expect(policy.redundancy == 0 && !policy.fec)
        policy.update(loss: 0.4)
        #expect(policy.bitrate == 24_000, "very high loss caps the bitrate")
    }

    @Test func theBitrateBacksOffWhenQueuesBuildAndComesBack() {
        var policy = ProtectionPolicy(bitrate: 32_000)
        policy.update(loss: 0, roundTrip: 80)
        #expect(policy.bitrate == 32_000)
        policy.update(loss: 0, roundTrip: 400)  // queueing: far above the 80 ms seen before
        #expect(policy.bitrate == 24_000)
        policy.update(loss: 0, roundTrip: 500)
        policy.update(loss: 0, roundTrip: 500)
        #expect(policy.bitrate == 16_000, "never below 16 kb/s")
        for _ in 0..<10 { policy.update(loss: 0, roundTrip: 90) }
        #expect(policy.bitrate == 24_000, "calm brings it back, slowly")
        for _ in 0..<30 { policy.update(loss: 0, roundTrip: 90) }
        #expect(policy.bitrate == 32_000)
    }
}

@Suite struct PacketCacheTests {
    @Test func keepsTheLastPacketsBySequence() {
        var cache = PacketCache()
        for sequence in 0..<200 { cache.store(UInt16(sequence), [UInt8(sequence), 1, 2]) }
        #expect(cache.packet(199) == [199, 1, 2])
        #expect(cache.packet(72) == [72, 1, 2])
        #expect(cache.packet(71) == nil)  // 128 newer ones replaced it
        #expect(cache.packet(300) == nil)
        cache.store(5, [UInt8](repeating: 0, count: 2_000))  // too large to keep
        #expect(cache.packet(5) == nil)
    }
}
