/// The echo test's state: packets held until they are due.
final class EchoLoop {
    let delay: Double
    /// When the router first saw it (its first tick).
    var started: Double?
    /// Plain RTP packets and when each goes back, in arrival order (the delay is fixed).
    private(set) var held: [(due: Double, packet: [UInt8])] = []
    /// At most this many held (ten seconds of 20 ms packets, with room for retransmissions).
    static let capacity = 1_000
    /// Opus's top rate (bits per second): no real voice or music sends more.
    static let topRate = 510_000.0
    /// At most this many bytes held: the delay's worth at Opus's top rate (640 KB at 10 s);
    /// what comes beyond is dropped, not echoed.
    let byteBound: Int
    private(set) var heldBytes = 0

    init(delay: Double) {
        self.delay = delay
        byteBound = Int(delay / 1_000 * Self.topRate / 8)
    }

    /// Holds `packet` until `due`, if the bounds leave room for it (false: dropped).
    func hold(_ packet: [UInt8], due: Double) -> Bool {
        guard held.count < Self.capacity, heldBytes + packet.count <= byteBound else { return false }
        held.append((due, packet))
        heldBytes += packet.count
        return true
    }

    /// Lets go of the first `count` held packets (sent).
    func release(first count: Int) {
        for index in 0..<count { heldBytes -= held[index].packet.count }
        held.removeFirst(count)
    }

    /// The SSRC the echo comes back with: the member's own, with its top bit flipped.
    static func echoSSRC(of ssrc: UInt32) -> UInt32 { ssrc ^ 0x8000_0000 }
}
