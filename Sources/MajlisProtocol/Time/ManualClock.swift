import Synchronization

/// A clock that moves only when told (`advance(by:)`), for tests and previews: a test about a
/// grace period, an expiry or a retry never races the machine's load. Sleepers wake, in deadline
/// order, when the clock passes their deadline.
public final class ManualClock: MillisecondClock {
    private struct Sleeper {
        var id: Int
        var deadline: Int64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Int64
        var sleepers: [Sleeper] = []
        var nextId = 0
    }

    private let state: Mutex<State>

    /// Starts at `now`; a server's wall clock starts at `SystemClock().now()`, so that freshly
    /// minted tokens are valid on it.
    public init(now: Int64 = 1_800_000_000_000) {
        state = Mutex(State(now: now))
    }

    public func now() -> Int64 { state.withLock { $0.now } }

    /// How many tasks are sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(milliseconds: Int64) async throws {
        try await sleep(relative: milliseconds)
    }

    /// Sleeps until the clock reads `deadline`, read under the same lock `advance` takes: a
    /// deadline that the clock has passed meanwhile wakes at once.
    public func sleep(until deadline: Int64) async throws {
        try await sleep(relative: nil, until: deadline)
    }

    private func sleep(relative milliseconds: Int64?, until absolute: Int64 = 0) async throws {
        let id = state.withLock { state -> Int in
            state.nextId += 1
            return state.nextId
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // A task cancelled before it got here had its `onCancel` run with no sleeper to
                // wake: it must not sleep. (Checked under the lock `onCancel` takes, so a cancel
                // comes either before this check or after the sleeper is there to be woken.)
                enum Start { case ready, cancelled, asleep }
                let start = state.withLock { state -> Start in
                    if Task.isCancelled { return .cancelled }
                    let deadline = milliseconds.map { state.now + $0 } ?? absolute
                    if deadline <= state.now { return .ready }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return .asleep
                }
                switch start {
                case .ready: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .asleep: break
                }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration` and wakes every sleeper whose deadline has come.
    public func advance(by duration: Duration) { advance(by: duration.milliseconds) }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    public func advance(by milliseconds: Int64) {
        let due = state.withLock { state -> [Sleeper] in
            state.now += milliseconds
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
