import Testing

@testable import MajlisForwarding

/// A browser's streams numbered as one: the first as it is, each new one (a page that
/// reconnected) from where the last ended.
struct UplinkNumberingTests {
    @Test func theFirstStreamKeepsItsNumbers() {
        var numbering = UplinkNumbering()
        for index in 0..<5 {
            let mapped = numbering.map(ssrc: 7, sequence: 65_534 &+ UInt16(index), timestamp: 4_000_000_000 &+ UInt32(index * 960), now: Double(index * 20))
            #expect(mapped.sequence == 65_534 &+ UInt16(index) && mapped.timestamp == 4_000_000_000 &+ UInt32(index * 960))
            #expect(numbering.browsers(mapped.sequence) == mapped.sequence)
        }
    }

    @Test func aNewStreamContinuesWhereTheLastEndedWhateverItsOwnNumbers() {
        var numbering = UplinkNumbering()
        for index in 0..<50 { _ = numbering.map(ssrc: 1, sequence: 30_000 + UInt16(index), timestamp: 1_000 + UInt32(index * 960), now: 1_000 + Double(index * 20)) }
        // The last packet: 30,049 at 48,040 (arrived at 1,980 ms). The page reconnects 3 s later
        // with numbers far behind the old ones (and ahead, for the timestamps).
        let first = numbering.map(ssrc: 2, sequence: 12, timestamp: 3_000_000_000, now: 4_980)
        #expect(first.sequence == 30_050)
        #expect(first.timestamp == 48_040 + 3_000 * 48)
        let next = numbering.map(ssrc: 2, sequence: 13, timestamp: 3_000_000_960, now: 5_000)
        #expect(next.sequence == 30_051 && next.timestamp == first.timestamp + 960)
        #expect(numbering.browsers(next.sequence) == 13)
        // A packet of the new stream that comes late keeps its place, and does not move the end.
        #expect(numbering.map(ssrc: 2, sequence: 11, timestamp: 2_999_999_040, now: 5_010).sequence == 30_049)
        #expect(numbering.map(ssrc: 2, sequence: 14, timestamp: 3_000_001_920, now: 5_020).sequence == 30_052)
    }

    @Test func aStreamThatFollowsAtOnceStillMovesOnAFrame() {
        var numbering = UplinkNumbering()
        _ = numbering.map(ssrc: 1, sequence: 65_535, timestamp: UInt32.max, now: 0)
        let mapped = numbering.map(ssrc: 9, sequence: 100, timestamp: 5, now: 0)
        #expect(mapped.sequence == 0 && mapped.timestamp == 959)
    }
}
