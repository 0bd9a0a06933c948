import Foundation

/// The wall clock: Unix milliseconds, for what is dated (tokens, timestamps, expiries).
public struct SystemClock: MillisecondClock {
    public init() {}

    public func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    public func sleep(milliseconds: Int64) async throws {
        try await Task.sleep(for: .milliseconds(max(0, milliseconds)))
    }
}
