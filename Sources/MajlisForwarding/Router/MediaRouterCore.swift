import MajlisProtocol
import MajlisTransport

/// The selective forwarding unit's state machine: it takes room commands, datagrams and the
/// time, and answers through a `RouterOutput`; it knows nothing of sockets or threads.
///
/// Each member of a room has an SSRC and an SRTP key (from its snapshot); it proves it owns
/// its UDP address with a STUN binding signed with that key, then sends SRTP. A packet is
/// forwarded only from a member the room says may be heard (seated, seat not host-muted, mic
/// on, `publish` granted), re-protected for each other bound member of the room; everything
/// else is dropped and counted.
///
/// Each leg is repaired on its own (docs/protocol.md section 12): the router asks speakers for
/// what their uplink lost (NACK) and answers listeners' NACKs from a cache of each speaker's
/// last packets. Once a second (`sendReports`) it tells every member, in an RTCP sender report,
/// the loss its listeners see, from which senders choose FEC and RED; RED goes only to members
/// that decode it.
///
/// One owner: the router's thread, which alone calls every method, so nothing here locks.
public final class MediaRouterCore {
    public static let payloadType: UInt8 = 111
    public static let redPayloadType: UInt8 = 63
    public static let audioLevelExtension: UInt8 = 1
    /// Retransmissions a listener may cause per speaker, per second (and in a burst): the
    /// stream's own packet rate.
    public static let repairBudget = 50
    /// Binding challenges per member per second (and in a burst).
    public static let challengeBudget = 5

    var participants: [UInt32: MediaParticipant] = [:]
    /// Room → user → SSRC.
    var rooms: [String: [String: UInt32]] = [:]
    var speakers: [String: Set<UInt32>] = [:]
    /// The seat each speaker speaks from (for browsers' seat tracks).
    var seatOf: [UInt32: Int] = [:]
    /// Loudest level (0...100) and voice flag heard from each SSRC since the last `takeLevels`.
    var heard: [UInt32: (level: Int, vad: Bool)] = [:]
    /// Native speakers whose newest packet carried voice: more must follow (see `askOverdue`).
    var flowing: Set<UInt32> = []
    /// Browsers: by the server ufrag of their checks, by the addresses that passed a check, and
    /// those still in their DTLS handshake.
    var byLocalUfrag: [String: UInt32] = [:]
    var byAddress: [UDPAddress: UInt32] = [:]
    /// The browser each outstanding probe (by transaction id) speaks for.
    var probes: [[UInt8]: UInt32] = [:]
    /// The browser an unproven address last passed a check for (its DTLS is held for it).
    var unprovenOwner: [UDPAddress: UInt32] = [:]
    var handshaking: Set<UInt32> = []
    /// Members running a pre-call test.
    var precallTests: Set<UInt32> = []
    let challenge: BindingChallenge
    /// The certificate DTLS associations are made with (nil: no WebRTC).
    let identity: DTLSIdentity?
    /// What was counted since the start.
    public internal(set) var counters = MediaCounters()

    public init(challenge: BindingChallenge = BindingChallenge(), identity: DTLSIdentity? = nil) {
        self.challenge = challenge
        self.identity = identity
    }

    // MARK: Rooms

    public func apply(_ command: RouterCommand) {
        switch command {
        case .join(let room, let user, let ssrc, let key):
            if let old = rooms[room]?[user] { remove(old) }
            participants[ssrc] = MediaParticipant(room: room, user: user, ssrc: ssrc, key: key)
            rooms[room, default: [:]][user] = ssrc
        case .leave(let room, let user):
            guard let ssrc = rooms[room]?.removeValue(forKey: user) else { return }
            remove(ssrc)
            if rooms[room]?.isEmpty == true {
                rooms[room] = nil
                speakers[room] = nil
            }
        case .setSpeakers(let room, let seats):
            let map = rooms[room] ?? [:]
            for ssrc in speakers[room] ?? [] { seatOf[ssrc] = nil }
            var allowed = Set<UInt32>()
            for (user, seat) in seats {
                guard let ssrc = map[user] else { continue }
                allowed.insert(ssrc)
                seatOf[ssrc] = seat
            }
            speakers[room] = allowed
        case .webrtc(let room, let user, let peer):
            guard let ssrc = rooms[room]?[user], let participant = participants[ssrc] else { return }
            attach(peer, to: participant)
        case .echoTest(let test, let user, let ssrc, let key, let delay):
            startPrecall(.echo(EchoLoop(delay: delay)), room: Self.precallRoom(test), user: user, ssrc: ssrc, key: key)
        case .probe(let test, let user, let ssrc, let key, let up, let down):
            startPrecall(.probe(ProbeRun(up: up, down: down)), room: Self.precallRoom(test), user: user, ssrc: ssrc, key: key)
        }
    }

    private func startPrecall(_ test: PrecallTest, room: String, user: String, ssrc: UInt32, key: [UInt8]) {
        if let old = rooms[room]?[user] { remove(old) }
        let participant = MediaParticipant(room: room, user: user, ssrc: ssrc, key: key)
        participant.precall = test
        participants[ssrc] = participant
        rooms[room, default: [:]][user] = ssrc
        precallTests.insert(ssrc)
    }

    /// Forgets a member's media state (it left, or rejoined with a new SSRC).
    private func remove(_ ssrc: UInt32) {
        guard let participant = participants.removeValue(forKey: ssrc) else { return }
        flowing.remove(ssrc)
        precallTests.remove(ssrc)
        detachWebRTC(participant)
        heard[ssrc] = nil
        seatOf[ssrc] = nil
        speakers[participant.room]?.remove(ssrc)
    }

    /// Members with media state, in every room.
    public var memberCount: Int { participants.count }

    // MARK: Packets

    /// Handles the datagram in `buffer[0..<length]` from `from` at `now` (monotonic
    /// milliseconds). The buffer may be changed (an SRTP packet is unprotected in place).
    public func receive(_ buffer: inout [UInt8], length: Int, from: UDPAddress, now: Double, output: inout some RouterOutput) {
        guard length >= 2, length <= buffer.count else {
            counters.droppedBadPacket += 1
            return
        }
        let browser = byAddress.isEmpty ? nil : byAddress[from]
        switch MediaPacketKind(first: buffer[0], second: buffer[1]) {
        case .stun:
            let packet = Array(buffer.prefix(length))
            guard let request = try? STUNMessage(parsing: packet) else {
                counters.droppedBadPacket += 1
                return
            }
            if let ufrag = ICELite.localUfrag(of: request) {
                check(packet, request: request, ufrag: ufrag, from: from, now: now, output: &output)
            } else if request.type == STUNMessage.MessageType.bindingSuccess.rawValue, !probes.isEmpty {
                probeAnswered(packet, response: request, from: from, now: now, output: &output)
            } else {
                bind(packet, request: request, from: from, now: now, output: &output)
            }
        case .dtls where browser != nil:
            handshake(Array(buffer.prefix(length)), of: browser!, from: from, output: &output)
        case .dtls where !unprovenOwner.isEmpty:
            holdHandshake(Array(buffer.prefix(length)), from: from)
        case .rtcp where length >= 8:
            receiveReport(Array(buffer.prefix(length)), browser: browser, from: from, now: now, output: &output)
        case .rtp where length >= 12:
            if let browser {
                receiveFromBrowser(&buffer, length: length, member: browser, from: from, now: now, output: &output)
            } else {
                forward(&buffer, length: length, from: from, now: now, output: &output)
            }
        case .dtls, .unknown, .rtp, .rtcp:
            counters.droppedBadPacket += 1
        }
    }

    /// Forwards the SRTP packet in `buffer[0..<length]` from a native member to every other
    /// bound member of its room, if it may be heard.
    private func forward(_ buffer: inout [UInt8], length: Int, from: UDPAddress, now: Double, output: inout some RouterOutput) {
        let ssrc = UInt32(buffer[8]) << 24 | UInt32(buffer[9]) << 16 | UInt32(buffer[10]) << 8 | UInt32(buffer[11])
        guard let sender = participants[ssrc], sender.webrtc == nil, sender.address == from, let session = sender.inbound else {
            counters.droppedUnbound += 1
            return
        }
        guard let plainLength = try? buffer.withUnsafeMutableBytes({ try session.unprotect(srtpIn: $0, length: length) }) else {
            counters.droppedBadPacket += 1
            return
        }
        relay(&buffer, plainLength: plainLength, from: sender, now: now, output: &output)
    }

    /// Sends the plain packet in `buffer[0..<plainLength]` (in the router's own numbering:
    /// the sender's SSRC, Opus 111, RED 63, audio level 1) to every other bound member of the
    /// sender's room, if the sender may be heard; each copy is made what its receiver
    /// negotiated and protected for it.
    func relay(_ buffer: inout [UInt8], plainLength: Int, from sender: MediaParticipant, now: Double, output: inout some RouterOutput) {
        let ssrc = sender.ssrc
        if let test = sender.precall {
            precallPacket(buffer, plainLength: plainLength, from: sender, test: test, now: now)
            return
        }
        guard speakers[sender.room]?.contains(ssrc) == true else {
            counters.droppedNotAllowed += 1
            return
        }
        let sequence = UInt16(buffer[2]) << 8 | UInt16(buffer[3])
        let timestamp = UInt32(buffer[4]) << 24 | UInt32(buffer[5]) << 16 | UInt32(buffer[6]) << 8 | UInt32(buffer[7])
        let level = buffer.withUnsafeBytes { RTPPacket.audioLevel(in: UnsafeRawBufferPointer(rebasing: $0[0..<plainLength]), extensionId: Self.audioLevelExtension) }
        sender.uplinkNack.minimumAnswerTime = (sender.roundTrip ?? 0) * 0.4
        let retransmission = sender.uplinkNack.received(sequence, at: now, flowing: level?.voice)
        if sender.webrtc == nil, sender.uplinkNack.isFlowing { flowing.insert(ssrc) } else { flowing.remove(ssrc) }
        // A native speaker's uplink: how much it carries (browsers did not negotiate REMB). A
        // packet of several frames leaves when its last frame is made: that is its time.
        var estimate: Int?
        if sender.webrtc == nil {
            let samples = buffer[1] & 0x7F == Self.redPayloadType ? nil : buffer.withUnsafeBytes { OpusTOC.samples(inRTP: UnsafeRawBufferPointer(rebasing: $0[0..<plainLength])) }
            let packetSamples = max(960, min(samples ?? 960, 5_760))
            if samples != nil, !retransmission { sender.uplinkNack.packetInterval = Double(packetSamples) / 48 }
            let last = timestamp &+ UInt32(packetSamples - 960)
            estimate = sender.uplinkEstimate.packet(
                bytes: plainLength + SRTPTransform.tagLength, sequence: sequence, timestamp: retransmission ? nil : last, at: now)
        }
        if !retransmission {
            sender.uplink.count(sequence, timestamp: timestamp, arrival: now)
            if let level {
                let percent = Int((Double(127 - Int(level.level)) / 127 * 100).rounded())
                let previous = heard[ssrc]
                heard[ssrc] = (max(previous?.level ?? 0, percent), (previous?.vad ?? false) || level.voice)
            }

        }
        // A gap in the stream is real only if the timestamps moved on by at least a frame for
        // each packet in it: otherwise nothing in it is asked for or rebuilt (a client that
        // skips sequence numbers to have the router rebuild "lost" frames from its RED copies).
        if !retransmission {
            let advance = sender.newest.map { Int(Int16(bitPattern: sequence &- $0.sequence)) } ?? 1
            if advance > 1, let before = sender.newest, Int(Int32(bitPattern: timestamp &- before.timestamp)) < advance * Self.frameSamples {
                sender.uplinkNack.giveUp(between: before.sequence, and: sequence)
            }
            if advance > 0 { sender.newest = (sequence, timestamp) }
        }
        if sender.forwarding == nil { sender.forwarding = ForwardingBudget(now: now) }
        guard sender.forwarding!.take(plainLength, now: now) else {
            counters.droppedOverBudget += 1
            return
        }
        if sender.sent == nil { sender.sent = PacketCache() }
        buffer.withUnsafeBytes { sender.sent?.store(sequence, UnsafeRawBufferPointer(rebasing: $0[0..<plainLength])) }
        fanOut(&buffer, plainLength: plainLength, from: sender, sequence: sequence, timestamp: timestamp, now: now, output: &output)
        if buffer[1] & 0x7F == Self.redPayloadType, !retransmission, sender.uplinkNack.missingCount > 0 {
            recoverFromRedundancy(Array(buffer.prefix(plainLength)), from: sender, now: now, output: &output)
        }
        counters.forwarded += output.flush()
        // Ask a native speaker again for what its uplink lost (browsers did not negotiate NACK),
        // and tell it what its uplink carries when that changed.
        guard sender.webrtc == nil, let address = sender.address else { return }
        var feedback: [RTCPPacket] = []
        let lost = sender.uplinkNack.due(at: now)
        if !lost.isEmpty { feedback.append(.nack(ssrc: MediaSettings.serverSSRC, mediaSSRC: ssrc, lost: lost)) }
        if let estimate { feedback.append(.estimatedBitrate(ssrc: MediaSettings.serverSSRC, bitrate: UInt64(estimate), ssrcs: [ssrc])) }
        if !feedback.isEmpty, let secured = try? sender.outbound?.protect(rtcp: RTCPPacket.serializeCompound(feedback)) {
            output.send(secured, to: address)
            if !lost.isEmpty { counters.nacksSent += 1 }
            if estimate != nil { counters.estimatesSent += 1 }
        }
    }

    /// Sends the plain packet `buffer[0..<plainLength]` of `sender` to every other bound member
    /// of its room, each copy made what its receiver negotiated and protected for it (queued on
    /// `output`; the caller flushes).
    func fanOut(_ buffer: inout [UInt8], plainLength: Int, from sender: MediaParticipant, sequence: UInt16, timestamp: UInt32, now: Double, output: inout some RouterOutput) {
        let ssrc = sender.ssrc
        let isRED = buffer[1] & 0x7F == Self.redPayloadType
        // Only a member that plays packets of several frames joins them (on a thin link): what
        // others send is forwarded as it is, whatever its length.
        let multiframe = sender.receivesMultiframe && !isRED && buffer.withUnsafeBytes { Self.isMultiframe(UnsafeRawBufferPointer(rebasing: $0[0..<plainLength])) }
        let seat = seatOf[ssrc]
        var primaryOnly: [UInt8]??
        for (_, other) in rooms[sender.room] ?? [:] where other != ssrc {
            guard let receiver = participants[other], let address = receiver.address, let out = receiver.outbound else { continue }
            if multiframe && !receiver.receivesMultiframe {
                counters.droppedUnsupported += 1
                continue
            }
            var track: (ssrc: UInt32, sequence: UInt16, timestamp: UInt32)?
            if let leg = receiver.webrtc {
                guard leg.hasConsent(at: now), let seat, seat < leg.tracks.count else { continue }
                let mapped = leg.tracks[seat].map(source: ssrc, sequence: sequence, timestamp: timestamp, now: now)
                track = (leg.tracks[seat].ssrc, mapped.sequence, mapped.timestamp)
            }
            let packet: [UInt8]?
            if receiver.receivesRED || !isRED {
                packet = nil  // the plain packet as it lies in `buffer`
            } else {
                if primaryOnly == nil { primaryOnly = .some(Self.primaryOnly(Array(buffer.prefix(plainLength)))) }
                guard let stripped = primaryOnly ?? nil else { continue }
                packet = stripped
            }
            output.forward(to: address) { slot in
                let length: Int
                if let packet {
                    guard packet.count <= slot.count else { return nil }
                    packet.withUnsafeBytes { slot.copyMemory(from: $0) }
                    length = packet.count
                } else {
                    guard plainLength <= slot.count else { return nil }
                    buffer.withUnsafeBytes { slot.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<plainLength])) }
                    length = plainLength
                }
                if let track, let leg = receiver.webrtc { Self.rewrite(slot, length: length, for: leg.parameters, track: track) }
                return try? out.protect(rtpIn: slot, length: length)
            }
        }
    }

    /// Whether the plain Opus packet holds more than one 20 ms frame (a speaker on a thin
    /// uplink joins them): only members that said they play those get it.
    static func isMultiframe(_ plain: UnsafeRawBufferPointer) -> Bool {
        (OpusTOC.samples(inRTP: plain) ?? 0) > 960
    }

    static func isMultiframe(_ plain: [UInt8]) -> Bool {
        plain.withUnsafeBytes { isMultiframe($0) }
    }

    /// A RED packet turned into a plain Opus packet of its primary frame (other packets as
    /// they are), for members that do not decode RED.
    public static func primaryOnly(_ plain: [UInt8]) -> [UInt8]? {
        guard plain.count >= 2, plain[1] & 0x7F == redPayloadType else { return plain }
        guard var rtp = try? RTPPacket(parsing: plain), let red = try? REDPayload(parsing: rtp.payload) else { return nil }
        rtp.payloadType = red.primaryPayloadType
        rtp.payload = red.primary
        return rtp.serialized()
    }
}
