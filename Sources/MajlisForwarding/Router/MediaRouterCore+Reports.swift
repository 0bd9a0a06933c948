import MajlisProtocol
import MajlisTransport

extension MediaRouterCore {
    /// RTCP from a bound member (a browser is known by its address): receiver reports (its
    /// downlink loss and jitter, and the round trip through the block on our sender reports)
    /// and NACKs (sent again from the speaker's cache, to this member only).
    func receiveReport(_ packet: [UInt8], browser: UInt32?, from: UDPAddress, now: Double, output: inout some RouterOutput) {
        let ssrc = browser ?? UInt32(packet[4]) << 24 | UInt32(packet[5]) << 16 | UInt32(packet[6]) << 8 | UInt32(packet[7])
        guard let member = participants[ssrc], member.address == from, let plain = try? member.inbound?.unprotect(srtcp: packet),
            let reports = try? RTCPPacket.parseCompound(plain)
        else {
            counters.droppedBadPacket += 1
            return
        }
        for report in reports {
            switch report {
            case .receiverReport(_, let blocks):
                receiverReport(blocks, of: member, now: now)
            case .senderReport(_, _, _, _, _, let blocks) where member.webrtc != nil:
                receiverReport(blocks, of: member, now: now)
            case .nack(_, let media, let lost):
                repair(lost, of: media, for: member, now: now, output: &output)
            case .senderReport, .bye, .estimatedBitrate, .other:
                break
            }
        }
    }

    private func receiverReport(_ blocks: [RTCPReportBlock], of member: MediaParticipant, now: Double) {
        var loss = 0.0
        var jitter = 0.0
        for block in blocks {
            if block.ssrc == MediaSettings.serverSSRC {
                guard block.lastSenderReport != 0 else { continue }
                let middle = UInt32(truncatingIfNeeded: MonotonicClock.ntpTime(now) >> 16)
                let units = middle &- block.lastSenderReport &- block.delaySinceLastSenderReport
                let sample = Double(units) / 65.536
                if sample < 10_000 { member.roundTrip = member.roundTrip.map { $0 * 0.7 + sample * 0.3 } ?? sample }
            } else {
                loss = max(loss, Double(block.fractionLost) / 256)
                jitter = max(jitter, Double(block.jitter) / 48)
            }
        }
        member.downLoss = loss
        member.downLossAt = now
        member.worstDown = (max(member.worstDown?.loss ?? 0, loss), max(member.worstDown?.jitter ?? 0, jitter))
    }

    /// Sends `member` again what it lost of `media`'s stream, within its budget.
    private func repair(_ lost: [UInt16], of media: UInt32, for member: MediaParticipant, now: Double, output: inout some RouterOutput) {
        guard let speaker = participants[media], speaker.room == member.room, let cache = speaker.sent, let address = member.address else { return }
        let milliseconds = Int64(now)
        var budget = member.repairBudget[media] ?? TokenBucket(capacity: Self.repairBudget, now: milliseconds)
        defer { member.repairBudget[media] = budget }
        var asked = Set<UInt16>()
        for sequence in lost where asked.insert(sequence).inserted {
            guard let original = cache.packet(sequence) else { continue }
            guard budget.take(capacity: Self.repairBudget, perSecond: Double(Self.repairBudget), now: milliseconds) else {
                counters.repairsRefused += 1
                return
            }
            guard member.receivesMultiframe || !speaker.receivesMultiframe || !Self.isMultiframe(original),
                let packet = member.receivesRED ? original : Self.primaryOnly(original),
                let secured = try? member.outbound?.protect(rtp: packet)
            else { continue }
            output.send(secured, to: address)
            counters.retransmitted += 1
        }
    }

    /// How long (ms) a member's last receiver report counts towards the loss speakers are told
    /// of: clients report every second, so a member silent for longer (its network gone, say)
    /// no longer makes every speaker protect against the loss it last saw.
    static let reportLifetime = 5_000.0

    /// Once a second: closes each member's reporting interval and sends it an RTCP sender
    /// report (for the round trip) whose report block on its own stream gives the loss its
    /// listeners see: its uplink and the worst downlink in the room, combined. That is what
    /// its sender chooses FEC, RED and bitrate from.
    public func sendReports(now: Double, output: inout some RouterOutput) {
        var worstDown: [String: [(ssrc: UInt32, loss: Double)]] = [:]
        for participant in participants.values where participant.address != nil {
            if let interval = participant.uplink.takeInterval() {
                participant.upLoss = interval.loss
                participant.upHighest = interval.highest
                participant.upJitter = participant.uplink.jitter
                participant.worstUp = (max(participant.worstUp?.loss ?? 0, interval.loss), max(participant.worstUp?.jitter ?? 0, participant.upJitter))
            } else {
                participant.upLoss = nil
            }
            if let loss = participant.downLoss, now - participant.downLossAt <= Self.reportLifetime {
                worstDown[participant.room, default: []].append((participant.ssrc, loss))
            }
        }
        let ntp = MonotonicClock.ntpTime(now)
        for participant in participants.values {
            guard let address = participant.address else { continue }
            var blocks: [RTCPReportBlock] = []
            if let up = participant.upLoss {
                let down = worstDown[participant.room]?.filter { $0.ssrc != participant.ssrc }.map(\.loss).max() ?? 0
                let combined = 1 - (1 - up) * (1 - down)
                blocks.append(RTCPReportBlock(
                    ssrc: participant.webrtc?.peerSSRC ?? participant.ssrc, fractionLost: UInt8(min(255, combined * 256)), cumulativeLost: 0, highestSequence: UInt32(participant.webrtc == nil ? participant.upHighest : participant.uplinkNumbering.browsers(participant.upHighest)),
                    jitter: UInt32(participant.upJitter * 48)))
            }
            let report = RTCPPacket.senderReport(ssrc: MediaSettings.serverSSRC, ntpTime: ntp, rtpTime: 0, packetCount: 0, octetCount: 0, reports: blocks)
            if let secured = try? participant.outbound?.protect(rtcp: RTCPPacket.serializeCompound([report])) { output.send(secured, to: address) }
        }
    }

    /// The loudest speakers of each room since the last call (at most `top` per room), then
    /// starts counting again.
    public func takeLevels(top: Int = 5) -> [String: [SpeakerLevel]] {
        var result: [String: [SpeakerLevel]] = [:]
        for (ssrc, level) in heard {
            guard let participant = participants[ssrc] else { continue }
            result[participant.room, default: []].append(SpeakerLevel(user: participant.user, level: level.level, vad: level.vad))
        }
        heard = [:]
        return result.mapValues { Array($0.sorted { $0.level > $1.level }.prefix(top)) }
    }

    /// Each member's network quality since the last call, by room; only members who sent or
    /// reported anything.
    public func takeQuality() -> [String: [MemberQuality]] {
        var result: [String: [MemberQuality]] = [:]
        for participant in participants.values where participant.address != nil && (participant.worstUp != nil || participant.worstDown != nil) {
            let up = NetworkQualityLevel(loss: participant.worstUp?.loss ?? 0, jitter: participant.worstUp?.jitter ?? 0, roundTrip: participant.roundTrip)
            let down = NetworkQualityLevel(loss: participant.worstDown?.loss ?? 0, jitter: participant.worstDown?.jitter ?? 0, roundTrip: participant.roundTrip)
            result[participant.room, default: []].append(
                MemberQuality(
                    user: participant.user, up: up, down: down,
                    upMeasure: participant.worstUp.map { .init(loss: $0.loss, jitter: $0.jitter) },
                    downMeasure: participant.worstDown.map { .init(loss: $0.loss, jitter: $0.jitter) }))
            participant.worstUp = nil
            participant.worstDown = nil
        }
        return result
    }
}
