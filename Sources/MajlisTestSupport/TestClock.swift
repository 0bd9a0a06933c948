import Foundation
import Synchronization

/// Wall time for a test server that moves only when the test advances it, so a test about a
/// grace period or an expiry never races the machine's load.
public final class TestClock: Sendable {
    private let milliseconds: Mutex<Int64>

    /// Starts at the real time, so freshly minted tokens are valid.
    public init() {
        milliseconds = Mutex(Int64(Date().timeIntervalSince1970 * 1000))
    }

    /// Unix milliseconds on this clock.
    public func now() -> Int64 { milliseconds.withLock { $0 } }

    /// Moves the clock forward.
    public func advance(seconds: Double) {
        milliseconds.withLock { $0 += Int64(seconds * 1000) }
    }
}
