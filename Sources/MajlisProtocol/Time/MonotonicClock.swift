#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The monotonic clock (never steps back, stops in suspend), in whole milliseconds: for
/// intervals, deadlines and timeouts, never for dates. Its static readings serve the hot paths
/// that need finer time (a packet's arrival in nanoseconds, the media clock in fractional
/// milliseconds, RTCP's NTP format).
public struct MonotonicClock: MillisecondClock {
    public init() {}

    public func now() -> Int64 { Self.wholeMilliseconds() }

    public func sleep(milliseconds: Int64) async throws {
        try await Task.sleep(for: .milliseconds(max(0, milliseconds)))
    }

    /// Nanoseconds since an arbitrary start.
    public static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Milliseconds, with a fraction.
    public static func milliseconds() -> Double { Double(nanoseconds()) / 1e6 }

    /// Whole milliseconds.
    public static func wholeMilliseconds() -> Int64 { Int64(nanoseconds() / 1_000_000) }

    /// Microseconds from `start` (a reading of `nanoseconds()`) to now.
    public static func microseconds(since start: UInt64) -> Int { Int((nanoseconds() &- start) / 1_000) }

    /// A 64-bit NTP-format time (seconds, fraction) for `milliseconds` on this clock, as RTCP
    /// sender reports carry it.
    public static func ntpTime(_ milliseconds: Double) -> UInt64 {
        let seconds = UInt64(milliseconds / 1000)
        let fraction = UInt64((milliseconds / 1000 - Double(seconds)) * 4_294_967_296)
        return seconds << 32 | fraction
    }
}
