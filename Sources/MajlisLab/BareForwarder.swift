import Foundation
import MajlisForwarding
import MajlisProtocol
import MajlisTransport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The yardstick for `majlis bench media`: a forwarder with nothing of Majlis in it but the
/// work every forwarder must do. It receives each SRTP packet, unprotects it with the sender's
/// key, and sends every other receiver a copy protected with that receiver's key, in one batch,
/// the way the router does, with no rooms, rights, reports or repair. The router's packets per
/// CPU-second as a fraction of this one's, measured in the same run, says what Majlis costs
/// beyond the unavoidable, on any machine.
public final class BareForwarder: @unchecked Sendable {
    // Audited: `members`, `buffer` and `batch` belong to the forwarding thread once started.
    private struct Member {
        var address: UDPAddress
        var inbound: SRTPTransform
        var outbound: SRTPTransform
    }

    public let socket: UDPSocket
    private var members: [UInt32: Member] = [:]
    private var buffer = [UInt8](repeating: 0, count: 2048)
    private let batch = UDPBatch(capacity: 256)
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)
    /// The forwarding thread's CPU clock, once it runs.
    private let cpuClock = Atomic<Int32>(-1)
    private let started = DispatchSemaphore(value: 0)
    /// Copies sent, the forwarding thread's CPU seconds and each copy's receive-to-send time,
    /// once stopped.
    private let result = Mutex<(forwarded: Int, cpu: Double, latency: LatencyHistogram)>((0, 0, LatencyHistogram()))
    /// Receive to send of each copy, microseconds (the forwarding thread's).
    private var latency = LatencyHistogram()

    /// Members by SSRC: where each receives and its SRTP key.
    public init(members: [(ssrc: UInt32, address: UDPAddress, key: [UInt8])]) throws {
        socket = try UDPSocket(host: "127.0.0.1", port: 0, receiveTimeoutMilliseconds: 50)
        for member in members {
            self.members[member.ssrc] = Member(
                address: member.address, inbound: try SRTPTransform(key: member.key, direction: .inbound),
                outbound: try SRTPTransform(key: member.key, direction: .outbound))
        }
        let thread = Thread { [self] in
            ThreadName.set("bare-forwarder")
            ThreadScheduling.setRealtime(true)  // as the router's thread asks (no budget: a benchmark's)
            var clock = clockid_t()
            if pthread_getcpuclockid(pthread_self(), &clock) == 0 { cpuClock.store(clock, ordering: .relaxed) }
            started.signal()
            var forwarded = 0
            while running.load(ordering: .relaxed) {
                guard let (length, from) = socket.receive(into: &buffer), length >= 12 else { continue }
                forwarded += forward(length: length, from: from, arrived: MonotonicClock.nanoseconds())
            }
            let cpu = cpuSeconds
            result.withLock { [latency] in $0 = (forwarded, cpu, latency) }
            finished.signal()
        }
        thread.start()
        started.wait()
    }

    /// The CPU seconds the forwarding thread used so far (read from any thread, while it runs).
    public var cpuSeconds: Double {
        var spec = timespec()
        guard clock_gettime(cpuClock.load(ordering: .relaxed), &spec) == 0 else { return 0 }
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    public var address: UDPAddress { UDPAddress(host: "127.0.0.1", port: socket.port)! }

    private func forward(length: Int, from: UDPAddress, arrived: UInt64) -> Int {
        let ssrc = UInt32(buffer[8]) << 24 | UInt32(buffer[9]) << 16 | UInt32(buffer[10]) << 8 | UInt32(buffer[11])
        guard let sender = members[ssrc],
            let plain = try? buffer.withUnsafeMutableBytes({ try sender.inbound.unprotect(srtpIn: $0, length: length) })
        else { return 0 }
        var sent = 0
        for (other, member) in members where other != ssrc {
            if batch.count == batch.capacity { sent += send(arrived: arrived) }
            batch.add(to: member.address) { slot in
                buffer.withUnsafeBytes { slot.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<plain])) }
                return try? member.outbound.protect(rtpIn: slot, length: plain)
            }
        }
        return sent + send(arrived: arrived)
    }

    /// Sends the batch, and counts each copy's time since its packet `arrived`, as the router does.
    private func send(arrived: UInt64) -> Int {
        let sent = batch.send(from: socket)
        let microseconds = MonotonicClock.microseconds(since: arrived)
        for _ in 0..<sent { latency.record(microseconds: microseconds) }
        return sent
    }

    /// Stops the thread; returns the copies it sent, the CPU seconds it used and each copy's
    /// receive-to-send time (microseconds).
    public func stop() -> (forwarded: Int, cpu: Double, latency: LatencyHistogram) {
        running.store(false, ordering: .relaxed)
        finished.wait()
        socket.close()
        return result.withLock { $0 }
    }
}
