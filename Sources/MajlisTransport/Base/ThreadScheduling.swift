import CNetShim

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The calling thread's scheduling: real-time (first in, first out, above every ordinary
/// thread) or ordinary, and the CPU time it used.
public enum ThreadScheduling {
    /// The real-time priority asked for: low among real-time threads (the kernel's own run
    /// at 50 and above), above every ordinary one.
    public static let priority: Int32 = 10

    /// Makes the calling thread real-time (`true`) or ordinary; whether that was allowed
    /// (real-time needs the privilege, or an `RLIMIT_RTPRIO` of at least `priority`).
    @discardableResult
    public static func setRealtime(_ on: Bool) -> Bool {
        majlis_set_thread_realtime(on ? priority : 0) == 0
    }

    /// Makes thread `tid` of this process idle (it runs only when nothing else wants a core) or
    /// ordinary again; whether that was allowed.
    @discardableResult
    public static func setIdle(thread tid: Int32, _ idle: Bool) -> Bool {
        majlis_set_thread_idle(tid, idle ? 1 : 0) == 0
    }

    /// Lets thread `tid` (of any process, where allowed: the benchmark pins its server's) run only
    /// on `core` (nil: on any); whether it was allowed.
    @discardableResult
    public static func pin(thread tid: Int32, to core: Int?) -> Bool {
        majlis_pin_thread(tid, Int32(core ?? -1)) == 0
    }

    /// The CPU time the calling thread has used, in milliseconds.
    public static func cpuMilliseconds() -> Double {
        var spec = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec) == 0 else { return 0 }
        return Double(spec.tv_sec) * 1_000 + Double(spec.tv_nsec) / 1e6
    }
}
