import MajlisProtocol
import MajlisTransport

extension MediaRouterCore {
    /// Samples in one 20 ms Opus frame at 48 kHz.
    static let frameSamples = 960
    /// The most redundant copies a packet holds for the router to rebuild from: our clients
    /// send up to three (`ProtectionPolicy`), browsers one or two.
    static let maxRedundantBlocks = 3
    /// How far back (frames) a copy may reach: our clients' widest is six.
    static let maxRecoveryDistance = 6

    /// Asks each native speaker whose stream stopped mid-speech for what it must have sent
    /// since (its uplink is losing a burst): the burst is asked for while it lasts, not once a
    /// packet after it shows the gap, which at 100 ms of burst made repairs 100 ms later. Run
    /// it every 10 ms or so. Packets arrive every 20 ms give or take the uplink's jitter, so a
    /// packet is overdue once four times that jitter (at least 60 ms) has passed too.
    public func askOverdue(now: Double, output: inout some RouterOutput) {
        for ssrc in flowing {
            guard let sender = participants[ssrc], let address = sender.address else { continue }
            sender.uplinkNack.markOverdue(at: now, grace: max(60, 4 * sender.uplink.jitter))
            let lost = sender.uplinkNack.due(at: now)
            guard !lost.isEmpty,
                let secured = try? sender.outbound?.protect(rtcp: RTCPPacket.serializeCompound([.nack(ssrc: MediaSettings.serverSSRC, mediaSSRC: ssrc, lost: lost)]))
            else { continue }
            output.send(secured, to: address)
            counters.nacksSent += 1
        }
    }

    /// Rebuilds the frames `sender`'s uplink lost from the redundant copies in `plain` (a RED
    /// packet) and sends each on as a packet of its own, with copies of the frames the same
    /// distances before it as the router has them: so each leg is protected on its own. Without
    /// it, a frame reaches a listener only in packets that crossed both legs (at 20% loss on each,
    /// all three of a frame's packets are lost about 5% of the time; rebuilt, about 1.6%). The
    /// frame is no longer asked for, and stays in the cache for listeners' NACKs.
    ///
    /// Only what a real stream could have lost is rebuilt: a frame missing from a gap its
    /// timestamps make real (`relay` gives the others up), from a packet holding at most
    /// `maxRedundantBlocks` copies of whole 20 ms frames at most `maxRecoveryDistance` back. A
    /// client that skips sequence numbers and packs many copies in each packet (to have the
    /// router multiply its packets) gets nothing rebuilt; one that moves its timestamps on too
    /// gets at most three frames a packet, each charged to its `ForwardingBudget`.
    func recoverFromRedundancy(_ plain: [UInt8], from sender: MediaParticipant, now: Double, output: inout some RouterOutput) {
        guard let rtp = try? RTPPacket(parsing: plain), let red = try? REDPayload(parsing: rtp.payload), red.redundant.count <= Self.maxRedundantBlocks else { return }
        let copies = red.redundant.filter {
            $0.payloadType == Self.payloadType && $0.timestampOffset > 0 && Int($0.timestampOffset) % Self.frameSamples == 0
                && Int($0.timestampOffset) / Self.frameSamples <= Self.maxRecoveryDistance
        }
        let distances = copies.map { Int($0.timestampOffset) / Self.frameSamples }
        for (block, back) in zip(copies, distances) {
            let lost = rtp.sequenceNumber &- UInt16(back)
            guard sender.uplinkNack.isMissing(lost) else { continue }
            let timestamp = rtp.timestamp &- UInt32(block.timestampOffset)
            let earlier = distances.sorted(by: >).compactMap { distance -> REDPayload.Block? in
                guard let cached = sender.sent?.packet(lost &- UInt16(distance)), let packet = try? RTPPacket(parsing: cached) else { return nil }
                let frame: [UInt8]
                if packet.payloadType == Self.redPayloadType {
                    guard let parsed = try? REDPayload(parsing: packet.payload), parsed.primaryPayloadType == Self.payloadType else { return nil }
                    frame = parsed.primary
                } else {
                    frame = packet.payload
                }
                let offset = timestamp &- packet.timestamp
                guard offset == UInt32(distance * Self.frameSamples), frame.count <= REDPayload.maxBlockLength else { return nil }
                return REDPayload.Block(payloadType: Self.payloadType, timestampOffset: UInt16(offset), data: frame)
            }
            let rebuilt = RTPPacket(
                payloadType: earlier.isEmpty ? Self.payloadType : Self.redPayloadType, sequenceNumber: lost, timestamp: timestamp, ssrc: rtp.ssrc,
                extensions: rtp.extensions,
                payload: earlier.isEmpty ? block.data : REDPayload(redundant: earlier, primaryPayloadType: Self.payloadType, primary: block.data).serialized())
            var bytes = rebuilt.serialized()
            guard sender.forwarding?.take(bytes.count, now: now) == true else {
                counters.droppedOverBudget += 1
                return
            }
            sender.uplinkNack.recovered(lost)
            sender.sent?.store(lost, bytes)
            fanOut(&bytes, plainLength: bytes.count, from: sender, sequence: lost, timestamp: timestamp, now: now, output: &output)
            counters.recoveredFromRedundancy += 1
        }
    }
}
