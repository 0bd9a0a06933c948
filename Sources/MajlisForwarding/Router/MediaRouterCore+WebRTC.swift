import MajlisProtocol
import MajlisTransport

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
        for pending in leg.unproven.values { probes[pending.transactionId] = nil }
        for address in leg.unproven.keys where unprovenOwner[address] == participant.ssrc { unprovenOwner[address] = nil }
        handshaking.remove(participant.ssrc)
        participant.webrtc = nil
        participant.address = nil
    }

    /// An ICE connectivity check: answered if it is signed with the member's server password.
    /// An address the member has not used before must first prove it receives: the server
    /// sends it a check of its own (`ICELite.probe`), signed with the browser's password, and
    /// only once that is answered from there may the address do DTLS, and a nominating check
    /// (USE-CANDIDATE) make it the path media goes to. A check whose source is forged (another
    /// member's address, or anyone's) so never moves media. Any check from the selected path
    /// renews consent.
    func check(_ packet: [UInt8], request: STUNMessage, ufrag: String, from: UDPAddress, now: Double, output: inout some RouterOutput) {
        guard let ssrc = byLocalUfrag[ufrag], let participant = participants[ssrc], let leg = participant.webrtc,
            let check = ICELite.check(packet, request: request, local: leg.peer.local), check.peerUfrag == leg.peer.peerUfrag
        else {
            counters.droppedBadPacket += 1
            return
        }
        counters.bindings += 1
        output.send(ICELite.success(transactionId: check.transactionId, from: from, local: leg.peer.local), to: from)
        guard leg.checked[from] != nil else {
            probe(from, of: participant, leg: leg, nominated: check.nominated, now: now, output: &output)
            return
        }
        select(from, of: participant, leg: leg, nominated: check.nominated, now: now)
    }

    /// Sends `address` the server's own check for `leg` (again only after `probeInterval`).
    private func probe(_ address: UDPAddress, of participant: MediaParticipant, leg: WebRTCLeg, nominated: Bool, now: Double, output: inout some RouterOutput) {
        if var pending = leg.unproven[address], now - pending.sentAt < WebRTCLeg.probeInterval {
            pending.nominated = pending.nominated || nominated
            leg.unproven[address] = pending
            return
        }
        if leg.unproven[address] == nil, leg.unproven.count >= WebRTCLeg.maxAddresses,
            let oldest = leg.unproven.min(by: { $0.value.sentAt < $1.value.sentAt })
        {
            forgetProbe(oldest.key, of: participant.ssrc, leg: leg)
        }
        let transactionId = MediaBinding.transactionId()
        var pending = leg.unproven[address] ?? WebRTCLeg.Unproven(transactionId: transactionId, sentAt: now, nominated: nominated)
        probes[pending.transactionId] = nil
        pending.transactionId = transactionId
        pending.sentAt = now
        pending.nominated = pending.nominated || nominated
        leg.unproven[address] = pending
        probes[transactionId] = participant.ssrc
        unprovenOwner[address] = participant.ssrc
        let peer = ICECredentials(ufrag: leg.peer.peerUfrag, password: leg.peer.peerPassword)
        output.send(ICELite.probe(transactionId: transactionId, peer: peer, localUfrag: leg.peer.local.ufrag, tieBreaker: leg.tieBreaker), to: address)
    }

    private func forgetProbe(_ address: UDPAddress, of ssrc: UInt32, leg: WebRTCLeg) {
        guard let pending = leg.unproven.removeValue(forKey: address) else { return }
        probes[pending.transactionId] = nil
        if unprovenOwner[address] == ssrc { unprovenOwner[address] = nil }
    }

    /// An answer to a probe: from the address it went to, signed with the browser's password.
    /// The address is proven: it is the member's from now on, DTLS held meanwhile is handled,
    /// and it is selected if a check from there nominated it.
    func probeAnswered(_ packet: [UInt8], response: STUNMessage, from: UDPAddress, now: Double, output: inout some RouterOutput) {
        guard let ssrc = probes[response.transactionId], let participant = participants[ssrc], let leg = participant.webrtc,
            let pending = leg.unproven[from], pending.transactionId == response.transactionId,
            ICELite.isSuccess(packet, remote: ICECredentials(ufrag: leg.peer.peerUfrag, password: leg.peer.peerPassword))
        else {
            counters.droppedBadPacket += 1
            return
        }
        forgetProbe(from, of: ssrc, leg: leg)
        select(from, of: participant, leg: leg, nominated: pending.nominated, now: now)
        for datagram in pending.held { handshake(datagram, of: ssrc, from: from, output: &output) }
    }

    /// DTLS from an address a member's probe has not yet proven: held (a few datagrams) until
    /// it is, so that a browser that starts DTLS as soon as its check is answered loses no time.
    func holdHandshake(_ packet: [UInt8], from: UDPAddress) {
        guard let ssrc = unprovenOwner[from], let leg = participants[ssrc]?.webrtc, var pending = leg.unproven[from],
            pending.held.count < WebRTCLeg.maxHeld
        else {
            counters.droppedBadPacket += 1
            return
        }
        pending.held.append(packet)
        leg.unproven[from] = pending
    }

    /// A proven address of `participant`'s: it may do DTLS, and becomes the media path when
    /// nominated; checks from the selected path renew consent.
    private func select(_ from: UDPAddress, of participant: MediaParticipant, leg: WebRTCLeg, nominated: Bool, now: Double) {
        let ssrc = participant.ssrc
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
        if nominated { participant.address = from }
        if participant.address == from { leg.consentAt = now }
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
            leg.inbound = try? SRTPTransform(key: inbound, direction: .inbound, maxStreams: MediaParticipant.maxPeerSSRCs)
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
            let browserSSRC = UInt32(packet[8]) << 24 | UInt32(packet[9]) << 16 | UInt32(packet[10]) << 8 | UInt32(packet[11])
            leg.peerSSRC = browserSSRC
            let numbered = sender.uplinkNumbering.map(
                ssrc: browserSSRC, sequence: UInt16(packet[2]) << 8 | UInt16(packet[3]),
                timestamp: UInt32(packet[4]) << 24 | UInt32(packet[5]) << 16 | UInt32(packet[6]) << 8 | UInt32(packet[7]), now: now)
            RTPRewrite.setSequence(packet, numbered.sequence)
            RTPRewrite.setTimestamp(packet, numbered.timestamp)
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
