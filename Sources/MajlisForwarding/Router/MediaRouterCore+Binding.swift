import MajlisProtocol
import MajlisTransport

extension MediaRouterCore {
    /// A STUN binding: USERNAME is the SSRC in decimal, MESSAGE-INTEGRITY is keyed with its key.
    /// From the member's current address it is answered at once. From any other address (a first
    /// binding, a new network, or a replay or forgery from elsewhere) it is answered 401 with a
    /// nonce for that address, and the media moves there only when a binding carrying that nonce
    /// comes back from it: proof that the address receives.
    func bind(_ packet: [UInt8], request: STUNMessage, from: UDPAddress, now: Double, output: inout some RouterOutput) {
        guard request.type == STUNMessage.MessageType.bindingRequest.rawValue, let name = request.username, let ssrc = UInt32(name),
            let participant = participants[ssrc], participant.webrtc == nil, STUNIntegrity.verify(packet, key: participant.key)
        else {
            counters.droppedBadPacket += 1
            return
        }
        let milliseconds = Int64(now)
        let proven = participant.address == from
            || request.attribute(.nonce).map { challenge.verify($0, ssrc: ssrc, address: from, now: milliseconds) } == true
        let answer: STUNMessage
        if proven {
            participant.address = from
            participant.receivesRED = request.attributes.contains { $0.type == STUNMessage.AttributeType.receivesRED.rawValue }
            participant.receivesMultiframe = request.attributes.contains { $0.type == STUNMessage.AttributeType.receivesMultiframe.rawValue }
            counters.bindings += 1
            answer = STUNMessage(
                type: .bindingSuccess, transactionId: request.transactionId,
                attributes: [.init(type: STUNMessage.AttributeType.xorMappedAddress.rawValue, value: STUNMessage.xorMappedAddress(ipv4: from.octets, port: from.port))])
        } else {
            var budget = participant.challengeBudget ?? TokenBucket(capacity: Self.challengeBudget, now: milliseconds)
            let allowed = budget.take(capacity: Self.challengeBudget, perSecond: Double(Self.challengeBudget), now: milliseconds)
            participant.challengeBudget = budget
            counters.challenges += 1
            guard allowed else { return }
            answer = STUNMessage(
                type: .bindingError, transactionId: request.transactionId,
                attributes: [
                    .init(type: STUNMessage.AttributeType.errorCode.rawValue, value: STUNMessage.errorCode(401, reason: "")),
                    .init(type: STUNMessage.AttributeType.nonce.rawValue, value: challenge.nonce(ssrc: ssrc, address: from, now: milliseconds)),
                ])
        }
        output.send(STUNIntegrity.sign(answer, key: participant.key), to: from)
        // One packet of a probe train from a proven address: what the uplink carries, told
        // before the first word.
        guard proven, let value = request.attribute(.probe), let probe = UplinkProbe(value: value),
            let estimate = participant.uplinkEstimate.probe(probe, bytes: packet.count, at: now),
            let secured = try? participant.outbound?.protect(rtcp: RTCPPacket.serializeCompound([.estimatedBitrate(ssrc: MediaSettings.serverSSRC, bitrate: UInt64(estimate), ssrcs: [ssrc])]))
        else { return }
        output.send(secured, to: from)
        counters.estimatesSent += 1
    }
}
