import MajlisProtocol
import MajlisTransport
/// The router's output onto a UDP socket: forwarded copies go out in one system call per
/// received packet (sendmmsg; nothing allocated), and each copy's receive-to-send time is
/// counted. One thread.
public final class SocketRouterOutput: RouterOutput {
    public let socket: UDPSocket
    private let batch = UDPBatch(capacity: 256)
    /// When the packet being forwarded arrived (monotonic nanoseconds).
    public var arrived: UInt64 = 0
    /// Receive to send, per forwarded copy, microseconds.
    public private(set) var latency = LatencyHistogram()

    public init(socket: UDPSocket) {
        self.socket = socket
    }

    public func send(_ bytes: [UInt8], to address: UDPAddress) {
        socket.send(bytes, to: address)
    }

    public func forward(to address: UDPAddress, _ fill: (UnsafeMutableRawBufferPointer) -> Int?) {
        if batch.count == batch.capacity { sentEarlier += sendBatch() }
        batch.add(to: address, fill)
    }

    public func flush() -> Int {
        defer { sentEarlier = 0 }
        return sentEarlier + sendBatch()
    }

    /// Copies of the current packet sent when the batch filled up.
    private var sentEarlier = 0

    private func sendBatch() -> Int {
        let sent = batch.send(from: socket)
        let microseconds = MonotonicClock.microseconds(since: arrived)
        for _ in 0..<sent { latency.record(microseconds: microseconds) }
        return sent
    }
}
