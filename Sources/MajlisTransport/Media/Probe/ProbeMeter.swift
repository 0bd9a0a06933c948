import MajlisProtocol

/// What arrived of one direction of a last-mile probe (`ProbeSchedule`), and what it shows:
/// loss and jitter (from the steady phase, and from the capacity phase when no queue built up
/// in it), and the rate the path carried in the capacity phase.
public struct ProbeMeter: Sendable {
    public let schedule: ProbeSchedule
    private var steadyReceived = Set<Int>()
    private var capacityReceived = Set<Int>()
    /// Arrivals of the capacity phase: the first and last time, and the bytes after the first.
    private var firstCapacity: Double?
    private var lastCapacity = 0.0
    private var capacityBytes = 0
    /// RFC 3550 interarrival jitter (ms) of each phase, and the previous transit.
    private var jitter: [ProbeSchedule.Phase: Double] = [:]
    private var transit: [ProbeSchedule.Phase: Double] = [:]

    public init(bitrate: Int) { schedule = ProbeSchedule(bitrate: bitrate) }

    /// A probe packet: its sequence index, phase, send time (ms, from its RTP timestamp), wire
    /// bytes, and when it arrived (ms).
    public mutating func arrived(index: Int, phase: ProbeSchedule.Phase, sentAt: Double, bytes: Int, at arrival: Double) {
        switch phase {
        case .steady:
            guard index < schedule.steadyCount, steadyReceived.insert(index).inserted else { return }
        case .capacity:
            guard index >= schedule.steadyCount, index < schedule.steadyCount + schedule.capacityCount,
                capacityReceived.insert(index).inserted else { return }
            if let first = firstCapacity {
                firstCapacity = min(first, arrival)
                capacityBytes += bytes
            } else {
                firstCapacity = arrival
            }
            lastCapacity = max(lastCapacity, arrival)
        }
        let current = arrival - sentAt
        if let previous = transit[phase] {
            jitter[phase, default: 0] += (abs(current - previous) - jitter[phase, default: 0]) / 16
        }
        transit[phase] = current
    }

    /// The rate the capacity phase arrived at, bits per second (headers counted); nil before
    /// two of its packets came.
    public var arrivalRate: Double? {
        guard let first = firstCapacity, lastCapacity > first, capacityBytes > 0 else { return nil }
        return Double(capacityBytes * 8) / (lastCapacity - first) * 1_000
    }

    /// Whether the capacity phase came through at (nearly) the rate it was sent: the path
    /// carries at least the expected rate, and that phase's losses are the path's own.
    public var keptUp: Bool {
        guard let rate = arrivalRate else { return false }
        let received = Double(capacityReceived.count) / Double(max(1, schedule.capacityCount))
        return rate >= 0.9 * Double(schedule.bitrate) * received
    }

    public var figures: ProbeFigures {
        var sent = schedule.steadyCount, received = steadyReceived.count
        if keptUp {
            sent += schedule.capacityCount
            received += capacityReceived.count
        }
        let loss = sent > 0 ? max(0, Double(sent - received) / Double(sent)) : 0
        let phaseJitter = keptUp ? max(jitter[.steady] ?? 0, jitter[.capacity] ?? 0) : jitter[.steady] ?? 0
        // A saturated path's arrivals are what its bottleneck passed less what was lost after
        // it: the steady phase's loss, put back.
        let steadyLoss = schedule.steadyCount > 0 ? Double(schedule.steadyCount - steadyReceived.count) / Double(schedule.steadyCount) : 0
        let rate = keptUp ? Double(schedule.bitrate) : (arrivalRate ?? 0) / max(0.5, 1 - steadyLoss)
        return ProbeFigures(bandwidth: Int(min(rate, Double(schedule.bitrate))), loss: loss, jitter: phaseJitter, received: steadyReceived.count + capacityReceived.count)
    }
}
