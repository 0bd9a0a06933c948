import Foundation

/// Waits until `condition` holds, checking every 20 ms, for at most `seconds` (generous, so a busy
/// machine only makes a passing test slower); returns whether it held.
@discardableResult
public func eventually(within seconds: Double = 30, _ condition: () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if await condition() { return true }
        if Date() > deadline { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
}

/// Runs blocking work (waiting for a process, a judge, a long computation) on a thread of its
/// own, so the test's task leaves the small shared pool of async threads to the other tests
/// (and to the servers they talk to) meanwhile.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: work()) }
    }
}

/// `offPool` for work that throws.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await offPool { Result { try work() } }.get()
}

/// `offPool` for a heavy computation (signal processing in an unoptimized build, a judge): it
/// also goes through `RealTimeGate` in pairs, so it never shares the machine's two cores with a
/// real-time test, and with at most one other like it.
public func offPoolInPairs<T: Sendable>(
    _ work: @escaping @Sendable () throws -> T, function: String = #function, file: String = #fileID
) async throws -> T {
    try await RealTimeGate.inPairs({ try await offPool(work) }, function: function, file: file)
}
