import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// This node as the cluster sees it: its id and addresses, and its load measured between two
/// reports (rooms and members now; packets forwarded and processor time per second since the
/// report before).
final class NodeStatus: Sendable {
    let id: String
    /// A random id of this process (a node restarted under the same id is a new instance).
    let instance: String
    let startedAt: Int64
    private let addresses = Mutex<(signaling: String, media: String)>(("", ""))
    private let previous = Mutex<(at: Double, cpu: Double, forwarded: Int)?>(nil)
    private let drainingFlag = Atomic<Bool>(false)
    /// Whether the node has started: in a cluster, joined the registry and read the live nodes.
    private let startedFlag = Atomic<Bool>(false)
    /// Work that waits for the start, in the order it came.
    private let waiting = Mutex<[@Sendable () -> Void]>([])

    init(id: String, startedAt: Int64) {
        self.id = id
        instance = (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16) }.joined()
        self.startedAt = startedAt
    }

    /// Where clients reach this node (known once it listens).
    func listening(signaling: String, media: String) {
        addresses.withLock { $0 = (signaling, media) }
    }

    /// Whether the node has started (see `whenStarted`).
    var isStarted: Bool { startedFlag.load(ordering: .acquiring) }

    /// Runs `work` now if the node has started, else once it has, after what waited before it.
    /// Until then a node of a cluster has not read the registry: it could neither list the live
    /// nodes in `hello` nor know which rooms other nodes hold. `work` must not itself wait for the
    /// start (it runs before the start is marked, and would be queued again and again).
    func whenStarted(_ work: @escaping @Sendable () -> Void) {
        let now = waiting.withLock { waiting in
            if isStarted { return true }
            waiting.append(work)
            return false
        }
        if now { work() }
    }

    /// The node has started: what waited runs, in order (and what arrives meanwhile after it).
    func started() {
        while true {
            let batch = waiting.withLock { waiting -> [@Sendable () -> Void] in
                if waiting.isEmpty { startedFlag.store(true, ordering: .releasing) }
                defer { waiting = [] }
                return waiting
            }
            if batch.isEmpty { return }
            for work in batch { work() }
        }
    }

    /// Whether this node gives its rooms away and takes none.
    var draining: Bool { drainingFlag.load(ordering: .relaxed) }

    /// Marks this node draining; false if it already was.
    func startDraining() -> Bool { !drainingFlag.exchange(true, ordering: .relaxed) }

    /// This node as placement weighs it, now, and whether it takes rooms.
    func placement(_ context: ServerContext) -> (candidate: RoomPlacement.Candidate, mayHost: Bool) {
        let hosts = context.rooms.all
        return (.init(id: id, members: hosts.reduce(0) { $0 + $1.memberCount }, rooms: hosts.count), !draining)
    }

    /// This node's entry now, with its load from `context`.
    func report(_ context: ServerContext) -> NodeInfo {
        let load = placement(context).candidate
        let forwarded = context.media.counted.forwarded
        let now = Double(MonotonicClock.nanoseconds()) / 1e9
        let cpu = Self.processorSeconds()
        let rates = previous.withLock { last -> (packets: Double, cpu: Double) in
            defer { last = (now, cpu, forwarded) }
            guard let last, now - last.at > 0.05 else { return (0, 0) }
            return (Double(forwarded - last.forwarded) / (now - last.at), (cpu - last.cpu) / (now - last.at))
        }
        let (signaling, media) = addresses.withLock { $0 }
        return NodeInfo(
            id: id, instance: instance, signaling: signaling, media: media, state: draining ? .draining : .active, rooms: load.rooms,
            members: load.members, packetsPerSecond: (rates.packets * 10).rounded() / 10,
            cpu: (rates.cpu * 1000).rounded() / 1000, startedAt: startedAt, reportedAt: context.now())
    }

    /// Processor time this process has used (user and system), seconds.
    private static func processorSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
