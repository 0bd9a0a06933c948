/// The echo test's state: packets held until they are due.
final class EchoLoop {
    let delay: Double
    /// When the router first saw it (its first tick).
    var started: Double?
    /// Plain RTP packets and when each goes back, in arrival order (the delay is fixed).
    var held: [(due: Double, packet: [UInt8])] = []
    /// At most this many held (ten seconds of 20 ms packets, with room for retransmissions).
    static let capacity = 1_000

    init(delay: Double) { self.delay = delay }

    /// The SSRC the echo comes back with: the member's own, with its top bit flipped.
    static func echoSSRC(of ssrc: UInt32) -> UInt32 { ssrc ^ 0x8000_0000 }
}
