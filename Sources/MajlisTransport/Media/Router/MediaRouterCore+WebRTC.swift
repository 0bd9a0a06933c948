import MajlisProtocol

/// Browsers (docs/protocol.md, WebRTC): ICE-lite checks select a path, DTLS on it yields the
/// SRTP keys, and packets are rewritten between the browser's negotiated numbers and the
/// router's own.
extension MediaRouterCore {
    /// Makes `participant` a browser with `peer`'s transport, or updates its parameters when the
    /// transport is the same (a renegotiation).
    func attach(_ peer: WebRTCPeer, to participant: MediaParticipant) {
        if let leg = participant.webrtc, leg.peer.local == peer.local || (leg.peer.peerUfrag == peer.peerUfrag && leg.peer.peerFingerprint == peer.peerFingerprint) {
            leg.update(peer.parameters)
        } else {
            guard let identity, let leg = try? WebRTCLeg(peer: peer, identity: identity) else {
                counters.dtlsFailures += 1
                return
            }
            detachWebRTC(participant)
            participant.webrtc = leg
            participant.address = nil
            byLocalUfrag[peer.local.ufrag] = participant.ssrc
            handshaking.insert(participant.ssrc)
        }
        participant.receivesRED = peer.parameters.redPayloadType != nil
        participant.receivesMultiframe = true  // every WebRTC stack plays any Opus packet (RFC 7587)
    }

    func detachWebRTC(_ participant: MediaParticipant) {
        guard let leg = participant.webrtc else { return }
        byLocalUfrag[leg.peer.local.ufrag] = nil
        for address in leg.checked.keys where byAddress[address] == participant.ssrc { byAddress[address] = nil }
        handshaking.remove(participant.ssrc)
        participant.webrtc = nil
        participant.address = nil
    }

    /// An ICE connectivity check: answered if it is signed with the member's server password;
    /// the address may then do DTLS, and a nominating check (USE-CANDIDATE) makes it the path
    /// media goes to. Any check from the selected path renews consent.
    func check(_ packet: [UInt8], request: STUNMessage, ufrag: String, from: UDPAddress, now: Double, output: inout some RouterOutput) {
        guard let ssrc = byLocalUfrag[ufrag], let participant = participants[ssrc], let leg = participant.webrtc,
            let check = ICELite.check(packet, request: request, local: leg.peer.local), check.peerUfrag == leg.peer.peerUfrag
        else {
            counters.droppedBadPacket += 1
            return
        }
        if leg.checked[from] == nil, leg.checked.count >= WebRTCLeg.maxAddresses,
            let oldest = leg.checked.filter({ $0.key != participant.address }).min(by: { $0.value < $1.value })?.key
        {
            leg.checked[oldest] = nil
            byAddress[oldest] = nil
        }
        leg.checked[from] = now
        if let owner = byAddress[from], owner != ssrc, let other = participants[owner]?.webrtc {
            other.checked[from] = nil  // the address moved to another member (a reused port)
        }
        byAddress[from] = ssrc
        if check.nominated { participant.address = from }
        if participant.address == from { leg.consentAt = now }
        counters.bindings += 1
        output.send(ICELite.success(transactionId: check.transactionId, from: from, local: leg.peer.local), to: from)
    }

    /// A DTLS record from a checked address of a browser.
    func handshake(_ packet: [UInt8], of ssrc: UInt32, from: UDPAddress, output: inout some RouterOutput) {
        guard let participant = participants[ssrc], let leg = participant.webrtc else {
            counters.droppedBadPacket += 1
            return
        }
        let wasHandshaking = leg.dtls.state == .handshaking
        for datagram in leg.dtls.receive(packet) { output.send(datagram, to: from) }
        switch leg.dtls.state {
        case .handshaking:
            break
        case .connected(let inbound, let outbound):
            guard wasHandshaking else { return }
            handshaking.remove(ssrc)
            leg.inbound = try? SRTPTransform(key: inbound, direction: .inbound)
            leg.outbound = try? SRTPTransform(key: outbound, direction: .outbound)
        case .failed, .closed:
            if wasHandshaking { counters.dtlsFailures += 1 }
            handshaking.remove(ssrc)
            leg.inbound = nil
            leg.outbound = nil
        }
    }

    /// Why a browser's DTLS failed, if it did (for logs and the member's error).
    public func dtlsFailure(room: String, user: String) -> String? {
        guard let ssrc = rooms[room]?[user], case .failed(let reason) = participants[ssrc]?.webrtc?.dtls.state else { return nil }
        return reason
    }

    /// SRTP from a browser's selected path: unprotected, renumbered into the router's own
    /// payload types, extension id and the member's SSRC, then relayed like any member's.
    func receiveFromBrowser(_ buffer: inout [UInt8], length: Int, member ssrc: UInt32, from: UDPAddress, now: Double, output: inout some RouterOutput) {
        guard let sender = participants[ssrc], let leg = sender.webrtc, sender.address == from, leg.parameters.sends, let session = leg.inbound else {
            counters.droppedUnbound += 1
            return
        }
        guard let plainLength = try? buffer.withUnsafeMutableBytes({ try session.unprotect(srtpIn: $0, length: length) }) else {
            counters.droppedBadPacket += 1
            return
        }
        let parameters = leg.parameters
        let accepted = buffer.withUnsafeMutableBytes { packet -> Bool in
            let type = packet[1] & 0x7F
            if type == parameters.opusPayloadType {
                RTPRewrite.setPayloadType(packet, Self.payloadType)
            } else if type == parameters.redPayloadType {
                RTPRewrite.setPayloadType(packet, Self.redPayloadType)
                guard RTPRewrite.renameREDBlocks(packet, length: plainLength, from: parameters.opusPayloadType, to: Self.payloadType) else { return false }
            } else {
                return false
            }
            leg.peerSSRC = UInt32(packet[8]) << 24 | UInt32(packet[9]) << 16 | UInt32(packet[10]) << 8 | UInt32(packet[11])
            RTPRewrite.setSSRC(packet, ssrc)
            if let level = parameters.audioLevelExtension { RTPRewrite.renameExtension(packet, length: plainLength, from: level, to: Self.audioLevelExtension) }
            return true
        }
        guard accepted else {
            counters.droppedBadPacket += 1
            return
        }
        relay(&buffer, plainLength: plainLength, from: sender, now: now, output: &output)
    }

    /// Makes a copy in the router's numbering what browser `parameters` negotiated, on `track`.
    static func rewrite(_ packet: UnsafeMutableRawBufferPointer, length: Int, for parameters: WebRTCParameters, track: (ssrc: UInt32, sequence: UInt16, timestamp: UInt32)) {
        if packet[1] & 0x7F == redPayloadType, let red = parameters.redPayloadType {
            RTPRewrite.setPayloadType(packet, red)
            RTPRewrite.renameREDBlocks(packet, length: length, from: payloadType, to: parameters.opusPayloadType)
        } else {
            RTPRewrite.setPayloadType(packet, parameters.opusPayloadType)
        }
        RTPRewrite.setSequence(packet, track.sequence)
        RTPRewrite.setTimestamp(packet, track.timestamp)
        RTPRewrite.setSSRC(packet, track.ssrc)
        if let level = parameters.audioLevelExtension { RTPRewrite.renameExtension(packet, length: length, from: audioLevelExtension, to: level) }
    }

    /// Timers: DTLS flights that got no answer are sent again.
    public func tick(now: Double, output: inout some RouterOutput) {
        for ssrc in handshaking {
            guard let participant = participants[ssrc], let leg = participant.webrtc else { continue }
            let address = participant.address ?? leg.checked.max(by: { $0.value < $1.value })?.key
            guard let address else { continue }
            for datagram in leg.dtls.retransmitIfDue() { output.send(datagram, to: address) }
        }
    }
}
