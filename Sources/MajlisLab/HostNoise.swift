import Foundation
import MajlisForwarding
import MajlisProtocol
import MajlisTransport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The benchmarks' third yardstick: what the machine itself does to a fixed piece of computing,
/// measured on an idle machine before any load starts. A server's latency tail cannot be shorter
/// than the tail this machine adds to its own work, and on a virtual machine the thread's CPU
/// clock counts the time the host takes the core away, so it also bounds how steady a
/// per-CPU-second figure can be.
///
/// The piece is pure arithmetic (no memory, no system calls), sized to take `microseconds` on a
/// busy core. It is timed three ways: on a thread that never sleeps; right after the thread wakes
/// from a 1 ms sleep, as a server's thread wakes for each packet or request; and the same while
/// every core also runs a spinner at the lowest priority, as under a benchmark's load. Beside the
/// wall time it keeps the thread's CPU time: where the two agree, the machine counted the thread
/// as running all along, so the time went to the host (on a virtual machine whose cores are all
/// busy, the host gives each one less), not to the machine's own scheduler.
public struct HostNoise: Sendable {
    /// The piece's size: its time on a busy core when calibrated, µs.
    public let microseconds: Int
    /// Wall time of the piece on a busy thread, µs.
    public let busy: LatencyHistogram
    /// Wall time of the piece right after a wake-up, µs.
    public let woken: LatencyHistogram
    /// The thread's CPU time for the same pieces after a wake-up, µs.
    public let wokenCPU: LatencyHistogram
    /// Wall time of the piece right after a wake-up, every core busy with a spinner, µs.
    public let loaded: LatencyHistogram
    /// The thread's CPU time for the same pieces, µs.
    public let loadedCPU: LatencyHistogram

    /// Runs `samples` pieces each way on the calling thread (about 2.6 ms a sample, with the
    /// default size).
    public static func measure(microseconds: Int = 300, samples: Int = 2_000) -> HostNoise {
        let iterations = calibrate(microseconds: microseconds)
        var busy = LatencyHistogram()
        for _ in 0..<samples {
            let start = MonotonicClock.nanoseconds()
            compute(iterations)
            busy.record(microseconds: MonotonicClock.microseconds(since: start))
        }
        let woken = afterWaking(iterations, samples: samples)
        let spinning = Atomic<Bool>(true)
        let stopped = DispatchGroup()
        for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
            stopped.enter()
            Thread.detachNewThread {
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)  // this thread only, on Linux
                while spinning.load(ordering: .relaxed) { compute(1_000) }
                stopped.leave()
            }
        }
        let loaded = afterWaking(iterations, samples: samples)
        spinning.store(false, ordering: .relaxed)
        stopped.wait()
        return HostNoise(microseconds: microseconds, busy: busy, woken: woken.wall, wokenCPU: woken.cpu, loaded: loaded.wall, loadedCPU: loaded.cpu)
    }

    /// Two lines for a benchmark's output.
    public var summary: String {
        "host, before the load: a piece of arithmetic sized to \(microseconds) µs took p50 \(busy.percentile(0.5)) / p99 \(busy.percentile(0.99)) µs "
            + "on a busy thread, p50 \(woken.percentile(0.5)) / p99 \(woken.percentile(0.99)) / max \(woken.maximum) µs right after waking from a 1 ms sleep "
            + "(thread CPU time p99 \(wokenCPU.percentile(0.99)) µs),\n"
            + "  and p50 \(loaded.percentile(0.5)) / p99 \(loaded.percentile(0.99)) / max \(loaded.maximum) µs so while every core also ran a lowest-priority spinner "
            + "(thread CPU time p99 \(loadedCPU.percentile(0.99)) µs: where it matches the wall time, the machine counted the thread as running and the host took the time)"
    }

    /// Iterations of `compute` that take about `microseconds` on this thread (the fastest of
    /// several tries, so a stall while calibrating does not shrink the piece).
    private static func calibrate(microseconds: Int) -> Int {
        let trial = 100_000
        var fastest = UInt64.max
        for _ in 0..<20 {
            let start = MonotonicClock.nanoseconds()
            compute(trial)
            fastest = min(fastest, MonotonicClock.nanoseconds() &- start)
        }
        return max(1, Int(Double(trial) * Double(microseconds) * 1_000 / Double(max(fastest, 1))))
    }

    /// Where `compute` leaves its result, so the optimizer keeps the work.
    private static let sink = Atomic<UInt64>(0)

    /// A chain of dependent multiplications: the same cost on every run, no memory traffic.
    private static func compute(_ iterations: Int) {
        var value = sink.load(ordering: .relaxed) | 1
        for _ in 0..<iterations { value = value &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
        sink.store(value, ordering: .relaxed)
    }

    /// `samples` pieces, each right after a 1 ms sleep: their wall times and the thread's CPU
    /// times, µs.
    private static func afterWaking(_ iterations: Int, samples: Int) -> (wall: LatencyHistogram, cpu: LatencyHistogram) {
        var wall = LatencyHistogram()
        var cpu = LatencyHistogram()
        for _ in 0..<samples {
            usleep(1_000)
            let start = MonotonicClock.nanoseconds()
            let cpuStart = ThreadScheduling.cpuMilliseconds()
            compute(iterations)
            cpu.record(microseconds: Int((ThreadScheduling.cpuMilliseconds() - cpuStart) * 1_000))
            wall.record(microseconds: MonotonicClock.microseconds(since: start))
        }
        return (wall, cpu)
    }
}
