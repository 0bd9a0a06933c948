import MajlisForwarding
import Testing

@testable import MajlisServer

/// Members' SSRCs: never one in use, never one the server sends under, always in range.
@Suite struct SSRCAllocatorTests {
    @Test func anSSRCInUseOrReservedIsSkippedAndTheRangeWraps() {
        let track = WebRTCParameters.trackSSRC(seat: 0)
        var allocator = SSRCAllocator(start: track - 2, inUse: [track - 1])
        // Held, then the seat tracks' block: the next free one after both.
        #expect(allocator.allocate() == track + 0x1_0000)
        var end = SSRCAllocator(start: SSRCAllocator.range.upperBound - 1, inUse: [SSRCAllocator.range.lowerBound])
        #expect(end.allocate() == SSRCAllocator.range.upperBound)
        #expect(end.allocate() == SSRCAllocator.range.lowerBound + 1)
        // Released, a value is free again; held, it is not handed out twice.
        end.release(SSRCAllocator.range.lowerBound)
        #expect(!end.inUse.contains(SSRCAllocator.range.lowerBound))
        var all = SSRCAllocator()
        let many = (0..<10_000).map { _ in all.allocate() }
        #expect(Set(many).count == many.count)
        #expect(many.allSatisfy { SSRCAllocator.range.contains($0) && !SSRCAllocator.isReserved($0) })
    }
}
