import MajlisTransport
import Testing

/// The budget that keeps the media router's real-time thread from taking a core.
struct RealtimeBudgetTests {
    @Test func aForwarderUnderHalfACoreStaysRealtime() {
        var budget = RealtimeBudget()
        #expect(budget.observe(now: 0, cpu: 0) == nil)
        // 20% of a core, second after second; readings inside a window decide nothing.
        for second in 1...10 {
            #expect(budget.observe(now: Double(second) * 1_000 - 500, cpu: 0) == nil)
            #expect(budget.observe(now: Double(second) * 1_000, cpu: Double(second) * 200) == nil)
        }
        #expect(budget.realtime)
    }

    @Test func aFloodMakesItOrdinaryAndItComesBackOnceQuiet() {
        var budget = RealtimeBudget()
        _ = budget.observe(now: 0, cpu: 0)
        #expect(budget.observe(now: 1_000, cpu: 400) == nil)  // 40%: within the budget
        #expect(budget.observe(now: 2_000, cpu: 1_000) == false)  // 60%: a flood
        #expect(!budget.realtime)
        #expect(budget.observe(now: 3_000, cpu: 1_400) == nil)  // 40%: not yet quiet enough
        #expect(budget.observe(now: 4_000, cpu: 1_500) == true)  // 10%: real-time again
        #expect(budget.realtime)
        #expect(budget.observe(now: 5_250, cpu: 2_300) == false)  // 64% over a longer window
    }

    @Test func theShareIsMeasuredOverTheWholeWindow() {
        var budget = RealtimeBudget(window: 1_000, ceiling: 0.5, floor: 0.25)
        _ = budget.observe(now: 0, cpu: 0)
        // A burst of 400 ms of CPU in a window of 1 s is 40%, under the ceiling, however it lay.
        #expect(budget.observe(now: 999, cpu: 400) == nil)
        #expect(budget.observe(now: 1_000, cpu: 400) == nil)
        #expect(budget.realtime)
    }
}
