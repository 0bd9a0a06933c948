/// Counts one stream's packets per reporting interval (RFC 3550 receiver-report style): how
/// many were expected from the sequence numbers, how many first transmissions arrived, and the
/// interarrival jitter. Retransmissions are left out, so the loss is what the network did.
public struct ReceptionCounter: Sendable {
    private var first: UInt16?
    private var highest: UInt16?
    private var received = 0
    private var last: (timestamp: UInt32, arrival: Double)?
    /// RFC 3550 interarrival jitter, milliseconds.
    public private(set) var jitter: Double = 0
    /// Packets expected and lost in the intervals taken so far.
    private var pastExpected = 0
    private var pastLost = 0

    public init() {}

    /// Notes a first transmission of `sequence`; its RTP `timestamp` and `arrival` time (ms)
    /// feed the jitter estimate.
    public mutating func count(_ sequence: UInt16, timestamp: UInt32? = nil, arrival: Double? = nil, clockRate: Double = 48_000) {
        received += 1
        if first == nil { first = sequence }
        if highest.map({ Int16(bitPattern: sequence &- $0) > 0 }) ?? (Int16(bitPattern: sequence &- first!) >= 0) { highest = sequence }
        if let timestamp, let arrival {
            if let last {
                let media = Double(Int32(bitPattern: timestamp &- last.timestamp)) / clockRate * 1000
                let difference = abs((arrival - last.arrival) - media)
                if difference < 10_000 { jitter += (difference - jitter) / 16 }
            }
            last = (timestamp, arrival)
        }
    }

    /// The interval's loss fraction (nil when nothing arrived), then starts a new interval.
    public mutating func takeInterval() -> (loss: Double, expected: Int, lost: Int, highest: UInt16)? {
        guard let first, let highest else { return nil }
        defer {
            self.first = highest &+ 1  // the next interval expects what follows
            self.highest = nil
            received = 0
        }
        let expected = Int(highest &- first) + 1
        guard expected <= 3_000 else { return nil }  // the stream jumped: nothing to judge
        let lost = max(0, expected - received)
        pastExpected += expected
        pastLost += lost
        return (Double(lost) / Double(expected), expected, lost, highest)
    }

    /// The share of the stream's packets lost since the counter began (the intervals taken and
    /// the current one so far), 0...1; nil before anything arrived.
    public var lossSoFar: Double? {
        let current = currentExpected
        guard pastExpected + current > 0, current <= 3_000 else { return nil }
        return Double(pastLost + max(0, current - received)) / Double(pastExpected + current)
    }

    /// The packets `lossSoFar` is taken over: expected since the counter began.
    public var expectedSoFar: Int { pastExpected + min(currentExpected, 3_000) }

    private var currentExpected: Int { first.flatMap { first in highest.map { Int($0 &- first) + 1 } } ?? 0 }
}
