#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Time on the monotonic clock (never steps back, stops in suspend): for intervals, deadlines
/// and RTP arithmetic, never for dates.
public enum MonotonicClock {
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

    /// A 64-bit NTP-format time (seconds, fraction) for `milliseconds` on this clock, as RTCP
    /// sender reports carry it.
    public static func ntpTime(_ milliseconds: Double) -> UInt64 {
        let seconds = UInt64(milliseconds / 1000)
        let fraction = UInt64((milliseconds / 1000 - Double(seconds)) * 4_294_967_296)
        return seconds << 32 | fraction
    }
}
