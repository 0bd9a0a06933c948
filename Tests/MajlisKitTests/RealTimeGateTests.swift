@testable import MajlisTestSupport
import Testing

/// The gate the real-time tests take turns through: a real-time test runs alone, two paired
/// tests run together, and a paired test may pass a real-time one that waits for a pair to end.
@Suite struct RealTimeGateTests {
    /// Returns when `count` tests wait at `gate` (the tasks entering it have got that far).
    func waitUntil(_ gate: RealTimeGate, holds count: Int) async {
        while await gate.waitingCount != count { await Task.yield() }
    }

    @Test func pairedTestsShareTheGateAndARealTimeOneHasItAlone() async {
        let gate = RealTimeGate()
        await gate.enter(.paired)
        await gate.enter(.paired)
        let realTime = Task { await gate.enter(.alone) }
        await waitUntil(gate, holds: 1)
        let third = Task { await gate.enter(.paired) }
        await waitUntil(gate, holds: 2)

        // One of the pair ends: the third paired test goes in, past the real-time one.
        await gate.leave(.paired)
        await third.value
        #expect(await gate.waitingCount == 1)

        // The pair ends: the real-time test goes in, and a paired one that comes waits for it.
        await gate.leave(.paired)
        #expect(await gate.waitingCount == 1)
        await gate.leave(.paired)
        await realTime.value
        let fourth = Task { await gate.enter(.paired) }
        await waitUntil(gate, holds: 1)
        let fifth = Task { await gate.enter(.alone) }
        await waitUntil(gate, holds: 2)

        // The real-time test ends: the paired one goes in, the next real-time one still waits.
        await gate.leave(.alone)
        await fourth.value
        #expect(await gate.waitingCount == 1)
        await gate.leave(.paired)
        await fifth.value
        #expect(await gate.waitingCount == 0)
    }
}
