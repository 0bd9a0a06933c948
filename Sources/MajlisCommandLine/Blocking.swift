import Dispatch
import Synchronization

/// Runs async work from a synchronous command, and waits for it.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let finished = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        finished.signal()
    }
    finished.wait()
    return try result.withLock { $0! }.get()
}
