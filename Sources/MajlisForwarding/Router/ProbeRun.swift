import MajlisTransport

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
