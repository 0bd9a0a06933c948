import Foundation

/// The real clock.
public struct SystemClock: KitClock {
    public init() {}

    public func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    public func sleep(milliseconds: Int64) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, milliseconds)) * 1_000_000)
    }
}
