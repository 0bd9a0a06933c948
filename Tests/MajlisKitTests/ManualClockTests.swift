import MajlisKit
import MajlisTestSupport
import Synchronization
import Testing

/// The test clock's sleeps end as a task's sleep should: when the clock passes their deadline,
/// or at once when the task is cancelled, however the cancel and the sleep interleave.
@Suite struct ManualClockTests {
    /// How a sleep ended.
    enum Ending: Equatable { case woke, cancelled }

    /// A value the test's tasks share.
    final class Shared<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
    }

    @Test func sleepersWakeWhenTheClockPassesTheirDeadline() async throws {
        let clock = ManualClock()
        let woken = Shared<[Int64]>([])
        let tasks = [300, 100, 200].map { delay in
            Task {
                try await clock.sleep(milliseconds: Int64(delay))
                woken.value.withLock { $0.append(Int64(delay)) }
            }
        }
        #expect(await eventually { clock.sleeperCount == 3 })
        clock.advance(by: 150)
        #expect(await eventually { woken.value.withLock { $0 } == [100] })
        clock.advance(by: 150)
        for task in tasks { try await task.value }
        #expect(Set(woken.value.withLock { $0 }) == [100, 200, 300] && clock.sleeperCount == 0)
    }

    /// A task cancelled before it begins to sleep does not sleep (a timer cancelled before its
    /// task first ran, say): its cancellation came when there was no sleeper yet to wake.
    @Test func aTaskCancelledBeforeItSleepsDoesNotSleep() async {
        let clock = ManualClock()
        let ending = Shared<Ending?>(nil)
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            do {
                try await clock.sleep(milliseconds: 1_000)
                ending.value.withLock { $0 = .woke }
            } catch {
                ending.value.withLock { $0 = .cancelled }
            }
        }
        task.cancel()
        #expect(await eventually { ending.value.withLock { $0 } == .cancelled })
        #expect(clock.sleeperCount == 0)
    }

    @Test func aSleepingTaskThatIsCancelledWakesAtOnce() async {
        let clock = ManualClock()
        let ending = Shared<Ending?>(nil)
        let task = Task {
            do {
                try await clock.sleep(milliseconds: 1_000)
                ending.value.withLock { $0 = .woke }
            } catch {
                ending.value.withLock { $0 = .cancelled }
            }
        }
        #expect(await eventually { clock.sleeperCount == 1 })
        task.cancel()
        #expect(await eventually { ending.value.withLock { $0 } == .cancelled })
        #expect(clock.sleeperCount == 0)
    }

    /// A sleep until a time the clock has already passed does not wait for another advance;
    /// one until a later time wakes when the clock reaches it, not before.
    @Test func aSleepUntilAPassedTimeEndsAtOnce() async throws {
        let clock = ManualClock(now: 1_000)
        clock.advance(by: 500)
        try await clock.sleep(until: 1_200)
        let woke = Shared<Bool>(false)
        let task = Task {
            try await clock.sleep(until: 2_000)
            woke.value.withLock { $0 = true }
        }
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: 499)
        #expect(clock.sleeperCount == 1 && !woke.value.withLock { $0 })
        clock.advance(by: 1)
        try await task.value
        #expect(woke.value.withLock { $0 })
    }

    /// A length of time becomes the nearest whole milliseconds in one place, and moves a
    /// manual clock and its sleepers as the same milliseconds would.
    @Test func aDurationIsWholeMillisecondsOnTheClock() async throws {
        #expect(Duration.seconds(2).milliseconds == 2_000)
        #expect(Duration.seconds(2.4).milliseconds == 2_400)
        #expect(Duration.milliseconds(7).milliseconds == 7)
        #expect(Duration.microseconds(1_499).milliseconds == 1)
        #expect(Duration.microseconds(1_501).milliseconds == 2)
        #expect(Duration.seconds(-2.4).milliseconds == -2_400)
        #expect(Duration.seconds(-1).milliseconds == -1_000)
        let clock = ManualClock(now: 0)
        let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: .milliseconds(999))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(1))
        try await sleeper.value
        #expect(clock.now() == 1_000)
        #expect(clock.now(plus: .seconds(0.5)) == 1_500)
    }
}
