import MajlisProtocol

/// A client's side of the last-mile probe (docs/protocol.md section 15), without I/O: datagrams
/// and the time in, datagrams out. It binds with the probe's credentials, then sends its uplink
/// train (`ProbeSchedule`) while it measures the server's downlink train (`ProbeMeter`) and the
/// round trip (a binding every 200 ms).
public final class ProbeClientCore {
    public let settings: MediaSettings
    private var binding: MediaBinding
    private let outbound: SRTPSession
    private let inbound: SRTPSession
    private var uplink: ProbeSchedule
    private var downlink: ProbeMeter
    private var lastBinding = -Double.infinity
    private var pending: [[UInt8]: Double] = [:]
    /// Round trips measured by bindings (ms), in the steady phase of both trains only (the
    /// capacity phase may fill a queue on the way).
    public private(set) var roundTrips: [Double] = []
    public private(set) var boundAt: Double?
    private var uplinkDone: Double?

    public init(settings: MediaSettings, up: Int, down: Int) throws(MediaError) {
        self.settings = settings
        binding = MediaBinding(ssrc: settings.ssrc, key: settings.key, receivesRED: false)
        outbound = try SRTPSession(key: settings.key, direction: .outbound)
        inbound = try SRTPSession(key: settings.key, direction: .inbound)
        uplink = ProbeSchedule(bitrate: up)
        downlink = ProbeMeter(bitrate: down)
    }

    public var isBound: Bool { boundAt != nil }

    /// Whether everything is sent and the last of it had time to arrive (a second, or two round
    /// trips when longer).
    public func isFinished(now: Double) -> Bool {
        guard let uplinkDone else { return false }
        return now - uplinkDone >= max(1_000, 2 * (roundTrip ?? 0))
    }

    /// The median round trip, ms.
    public var roundTrip: Double? {
        guard !roundTrips.isEmpty else { return nil }
        return roundTrips.sorted()[roundTrips.count / 2]
    }

    /// What arrived of the downlink train.
    public var downlinkFigures: ProbeFigures { downlink.figures }

    /// What is due by `now`: a binding (every 250 ms until bound, then every 200 ms through the
    /// steady phase) and, once bound, the uplink packets due.
    public func tick(now: Double) -> [[UInt8]] {
        var out: [[UInt8]] = []
        let steady = boundAt.map { now - $0 < ProbeSchedule.steadyDuration } ?? true
        if steady && now - lastBinding >= (isBound ? 200 : 250) {
            out.append(bindingRequest(at: now))
        }
        guard let boundAt else { return out }
        for (index, packet) in uplink.due(elapsed: now - boundAt) {
            var payload = [UInt8](repeating: 0, count: packet.size)
            payload[0] = packet.phase.rawValue
            let rtp = RTPPacket(
                payloadType: ProbeSchedule.payloadType, sequenceNumber: UInt16(truncatingIfNeeded: index),
                // When it goes (the host's tick may be coarser than the train's interval).
                timestamp: UInt32((now - boundAt) * 48), ssrc: settings.ssrc, payload: payload)
            if let secured = try? outbound.protect(rtp: rtp.serialized()) { out.append(secured) }
        }
        if uplink.finished && uplinkDone == nil { uplinkDone = now }
        return out
    }

    private func bindingRequest(at now: Double) -> [UInt8] {
        let transaction = MediaBinding.transactionId()
        pending[transaction] = now
        lastBinding = now
        return binding.request(transactionId: transaction)
    }

    /// A datagram from the server: a binding answer (a challenge is answered at once) or a
    /// downlink probe packet.
    public func receive(_ packet: [UInt8], now: Double) -> [[UInt8]] {
        guard packet.count >= 2 else { return [] }
        switch MediaPacketKind(first: packet[0], second: packet[1]) {
        case .stun:
            let answer = binding.receive(packet)
            guard answer != .ignored, packet.count >= 20 else { return [] }
            if let sent = pending.removeValue(forKey: Array(packet[8..<20])), case .bound = answer,
                boundAt.map({ now - $0 < ProbeSchedule.steadyDuration }) ?? true {
                roundTrips.append(now - sent)
            }
            switch answer {
            case .bound: if boundAt == nil { boundAt = now }
            case .challenged: return [bindingRequest(at: now)]
            case .ignored: break
            }
        case .rtp:
            guard let plain = try? inbound.unprotect(srtp: packet), let rtp = try? RTPPacket(parsing: plain),
                rtp.payloadType == ProbeSchedule.payloadType, let first = rtp.payload.first, let phase = ProbeSchedule.Phase(rawValue: first)
            else { return [] }
            downlink.arrived(
                index: Int(rtp.sequenceNumber), phase: phase, sentAt: Double(rtp.timestamp) / 48, bytes: packet.count + 28, at: now)
        default:
            break
        }
        return []
    }
}
