import MajlisAudio
import Testing

/// The queue between the engine's clock and a device's: it keeps order, drops the oldest past
/// its depth, and sheds a frame that stood spare for a whole window, but not one that a wandering
/// clock needed.
@Suite struct FrameQueueTests {
    static func frame(_ n: Int) -> [Int16] { [Int16](repeating: Int16(n), count: 960) }

    @Test func aBurstAtTheStartIsShedOneFrameAWindowDownToNoSpareFrame() {
        var queue = FrameQueue(depth: 4, window: 50)
        var next = 0
        for _ in 0..<3 {
            queue.push(Self.frame(next))
            next += 1
        }
        var taken: [Int16] = []
        // One in, one out: the three frames behind the one taken stand spare every time.
        for _ in 0..<200 {
            queue.push(Self.frame(next))
            next += 1
            taken.append(queue.pop()?.first ?? -1)
        }
        #expect(queue.count == 0)
        // Three frames were dropped, one at the end of each of the first three windows; the rest
        // came out in order.
        #expect(Set(0..<203).subtracting(taken.map(Int.init)) == [49, 100, 151])
        #expect(taken == taken.sorted())
    }

    @Test func aFrameAWanderingClockNeedsIsKept() {
        var queue = FrameQueue(depth: 4, window: 50)
        var next = 0
        var taken: [Int16] = []
        // Two in, two out: the first pop finds a spare frame, the second none.
        for _ in 0..<200 {
            for _ in 0..<2 {
                queue.push(Self.frame(next))
                next += 1
            }
            for _ in 0..<2 { taken.append(queue.pop()?.first ?? -1) }
        }
        #expect(taken == (0..<400).map(Int16.init))
    }

    @Test func pastItsDepthTheOldestGoesAndAnEmptyQueueGivesNothing() {
        var queue = FrameQueue(depth: 4)
        for n in 0..<6 { queue.push(Self.frame(n)) }
        #expect(queue.count == 4)
        #expect(queue.pop()?.first == 2)
        var empty = FrameQueue()
        #expect(empty.pop() == nil)
    }
}
