import MajlisProtocol
import MajlisTransport

extension MediaRouterCore {
    /// How long a pre-call test runs at most, ms.
    public static let precallLifetime = PrecallTest.lifetime

    /// The pseudo-room a member's pre-call test is kept under: no room id can be like it.
    public static func precallRoom(_ key: String) -> String { "\u{0}precall\u{0}\(key)" }

    /// The SSRC an echo test's echo comes back with, for a member sending with `ssrc`.
    public static func echoSSRC(of ssrc: UInt32) -> UInt32 { EchoLoop.echoSSRC(of: ssrc) }

    /// A packet from a member running a pre-call test (plain RTP in `buffer[0..<plainLength]`).
    func precallPacket(_ buffer: [UInt8], plainLength: Int, from sender: MediaParticipant, test: PrecallTest, now: Double) {
        switch test {
        case .echo(let loop):
            // Heard back `delay` after it was spoken: the way there and back is part of it.
            guard plainLength >= 12, buffer[1] & 0x7F != ProbeSchedule.payloadType,
                loop.hold(Array(buffer.prefix(plainLength)), due: now + max(0, loop.delay - (sender.roundTrip ?? 0)))
            else {
                counters.droppedNotAllowed += 1
                return
            }
        case .probe(let run):
            guard let rtp = try? RTPPacket(parsing: Array(buffer.prefix(plainLength))), rtp.payloadType == ProbeSchedule.payloadType,
                let first = rtp.payload.first, let phase = ProbeSchedule.Phase(rawValue: first)
            else {
                counters.droppedBadPacket += 1
                return
            }
            // The index counts from the member's first sequence number, 0 (see section 15).
            run.uplink.arrived(
                index: Int(rtp.sequenceNumber), phase: phase, sentAt: Double(rtp.timestamp) / 48, bytes: plainLength + 10 + 28, at: now)
        }
    }

    /// Every 10 ms: echoes that are due go back, the downlink probes that are due go out, and
    /// tests past their lifetime are forgotten.
    public func precallTick(now: Double, output: inout some RouterOutput) {
        guard !precallTests.isEmpty else { return }
        for ssrc in precallTests {
            guard let participant = participants[ssrc], let test = participant.precall else {
                precallTests.remove(ssrc)
                continue
            }
            let started: Double
            switch test {
            case .echo(let loop):
                started = loop.started ?? now
                loop.started = started
            case .probe(let run):
                started = run.started ?? now
                run.started = started
            }
            if now - started > PrecallTest.lifetime {
                participant.precall = nil
                precallTests.remove(ssrc)
                continue
            }
            guard let address = participant.address, let outbound = participant.outbound else { continue }
            switch test {
            case .echo(let loop):
                var sent = 0
                for (due, packet) in loop.held {
                    guard due <= now else { break }
                    sent += 1
                    var echoed = packet
                    if let leg = participant.webrtc {
                        // A browser hears it on the track of its answer's one receive section.
                        guard leg.hasConsent(at: now), !leg.tracks.isEmpty else { continue }
                        let sequence = UInt16(packet[2]) << 8 | UInt16(packet[3])
                        let timestamp = UInt32(packet[4]) << 24 | UInt32(packet[5]) << 16 | UInt32(packet[6]) << 8 | UInt32(packet[7])
                        let mapped = leg.tracks[0].map(source: ssrc, sequence: sequence, timestamp: timestamp, now: now)
                        let parameters = leg.parameters
                        echoed.withUnsafeMutableBytes {
                            Self.rewrite($0, length: packet.count, for: parameters, track: (leg.tracks[0].ssrc, mapped.sequence, mapped.timestamp))
                        }
                    } else {
                        echoed.withUnsafeMutableBytes { RTPRewrite.setSSRC($0, EchoLoop.echoSSRC(of: ssrc)) }
                    }
                    if let secured = try? outbound.protect(rtp: echoed) { output.send(secured, to: address) }
                }
                loop.release(first: sent)
            case .probe(let run):
                let begun = run.downlinkStarted ?? now
                run.downlinkStarted = begun
                // Stamped with when it goes, not when it was due: this tick runs every 10 ms and
                // the steady phase's packets are due every 5, so planned times made a clean path
                // read 6-7 ms of jitter.
                for (index, packet) in run.downlink.due(elapsed: now - begun) {
                    var payload = [UInt8](repeating: 0, count: packet.size)
                    payload[0] = packet.phase.rawValue
                    let rtp = RTPPacket(
                        payloadType: ProbeSchedule.payloadType, sequenceNumber: UInt16(truncatingIfNeeded: index),
                        timestamp: UInt32((now - begun) * 48), ssrc: MediaSettings.serverSSRC, payload: payload)
                    if let secured = try? outbound.protect(rtp: rtp.serialized()) { output.send(secured, to: address) }
                }
            }
        }
    }

    /// What arrived of each running probe's uplink so far, by SSRC.
    public var probeFigures: [UInt32: ProbeFigures] {
        var figures: [UInt32: ProbeFigures] = [:]
        for ssrc in precallTests {
            if case .probe(let run) = participants[ssrc]?.precall { figures[ssrc] = run.uplink.figures }
        }
        return figures
    }
}
