import MajlisTransport

/// A pre-call test a member runs with the router instead of being in a room
/// (docs/protocol.md section 15).
enum PrecallTest {
    /// What it sends comes back to it `delay` ms later, under `echoSSRC`.
    case echo(EchoLoop)
    /// It sends a probe train up, the router one down; the router measures what came up.
    case probe(ProbeRun)

    /// How long a test may run, ms: then the router forgets it.
    static let lifetime = 60_000.0
}

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

/// The network probe's state: the downlink train (started when the member's address is proven)
/// and what arrived of the uplink one.
final class ProbeRun {
    var started: Double?
    var downlink: ProbeSchedule
    var downlinkStarted: Double?
    var uplink: ProbeMeter
    var sequence: UInt16 = 0

    init(up: Int, down: Int) {
        downlink = ProbeSchedule(bitrate: down)
        uplink = ProbeMeter(bitrate: up)
    }
}
