import MajlisTransport
import Testing

@Suite struct DelayHistogramTests {
    @Test func bucketsAreAQuarterOctaveAndHoldTheirUpperEdge() {
        for microseconds in [1, 2, 3, 10, 999, 1_000, 45_000, 2_000_000] {
            let bucket = DelayHistogram.bucket(microseconds: microseconds)
            #expect(microseconds <= DelayHistogram.upperEdge(bucket) + 1)
            #expect(bucket == 0 || microseconds > DelayHistogram.upperEdge(bucket - 1))
        }
        #expect(DelayHistogram.bucket(microseconds: 0) == 0)
        #expect(DelayHistogram.bucket(microseconds: Int.max) == DelayHistogram.bucketCount - 1)
    }

    @Test func percentilesAndWindows() {
        var histogram = DelayHistogram()
        for _ in 0..<99 { histogram.record(microseconds: 1_000) }
        histogram.record(microseconds: 40_000)
        let mark = histogram
        #expect(histogram.percentile(0.5) >= 1_000 && histogram.percentile(0.5) < 1_200)
        #expect(histogram.percentile(0.99) < 1_200)
        #expect(histogram.percentile(1) >= 40_000 && histogram.percentile(1) < 48_000)
        for _ in 0..<10 { histogram.record(microseconds: 5_000) }
        let window = histogram.subtracting(mark)
        #expect(window.count == 10)
        #expect(window.percentile(0.5) >= 5_000 && window.percentile(0.5) < 6_000)
        #expect(DelayHistogram().percentile(0.99) == 0)
    }
}
