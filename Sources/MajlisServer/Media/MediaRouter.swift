import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// The selective forwarding unit: one UDP socket, one thread. Each member of a room gets an
/// SSRC and an SRTP key in its snapshot; it proves it owns its UDP address with a STUN binding
/// signed with that key, then sends SRTP. The router forwards a packet only from a member the
/// room says may be heard (seated, seat not host-muted, mic on, `publish` granted), re-protected
/// for each other bound member of the room (one sendmmsg per packet, nothing allocated);
/// everything else is dropped and counted.
///
/// Each leg is repaired on its own (docs/protocol.md section 12): the router asks speakers for
/// what their uplink lost (NACK) and answers listeners' NACKs from a cache of each speaker's
/// last packets. Once a second it tells every member, in an RTCP sender report, the loss its
/// listeners see, from which senders choose FEC and RED; RED goes only to members that decode it.
///
/// Thread rules: the router thread handles packets; room executors call `join`, `leave` and
/// `setSpeakers`; the sweeper calls `sendReports`, `takeLevels` and `takeQuality`. All take
/// `lock` (held for one packet at a time).
final class MediaRouter: @unchecked Sendable {
    // Audited: `participants`, `rooms`, `speakers` and `nextSSRC` are used only under `lock`.
    /// A member's media state. The SRTP sessions are made on first use (a binding, a packet), so
    /// members who never use voice cost a few bytes.
    final class Participant {
        let room: String
        let user: String
        let ssrc: UInt32
        let key: [UInt8]
        var address: UDPAddress?
        /// Whether it decodes RED (said in its binding); others get the primary frame only.
        var receivesRED = false
        /// Uplink: what arrived of what it sent, and what to ask it for again.
        var uplink = ReceptionCounter()
        var uplinkNack = NackTracker()
        /// Its last packets (plain RTP), for the NACKs of its listeners; made when it first speaks.
        var sent: PacketCache?
        /// The last reporting interval: uplink loss and jitter (nil: it sent nothing), downlink
        /// loss from its receiver report (nil: none came), round trip (ms).
        var upLoss: Double?
        var upHighest: UInt16 = 0
        var upJitter: Double = 0
        var downLoss: Double?
        var roundTrip: Double?
        /// The worst of the intervals since the last quality report (nil: nothing measured).
        var worstUp: (loss: Double, jitter: Double)?
        var worstDown: (loss: Double, jitter: Double)?
        /// Retransmissions this member may still ask for, per speaker's stream (at most the
        /// stream's own packet rate), and binding challenges it may still cause.
        var repairBudget: [UInt32: TokenBucket] = [:]
        var challengeBudget: TokenBucket?
        private var inboundSession: SRTPTransform?
        private var outboundSession: SRTPTransform?

        init(room: String, user: String, ssrc: UInt32, key: [UInt8]) {
            self.room = room
            self.user = user
            self.ssrc = ssrc
            self.key = key
        }

        /// Unprotects what this member sends.
        var inbound: SRTPTransform? {
            if inboundSession == nil { inboundSession = try? SRTPTransform(key: key, direction: .inbound) }
            return inboundSession
        }

        /// Protects what is forwarded to this member.
        var outbound: SRTPTransform? {
            if outboundSession == nil { outboundSession = try? SRTPTransform(key: key, direction: .outbound) }
            return outboundSession
        }
    }

    typealias Counters = MediaCounters

    static let payloadType: UInt8 = 111
    static let redPayloadType: UInt8 = 63
    static let audioLevelExtension: UInt8 = 1
    /// Retransmissions a listener may cause per speaker, per second (and in a burst): the
    /// stream's own packet rate.
    static let repairBudget = 50
    /// Binding challenges per member per second (and in a burst).
    static let challengeBudget = 5

    let socket: UDPSocket
    /// What clients are told to send to.
    let advertised: String
    private let lock = NSLock()
    private var participants: [UInt32: Participant] = [:]
    private var rooms: [String: [String: UInt32]] = [:]
    private var speakers: [String: Set<UInt32>] = [:]
    /// Loudest level (0...100) and voice flag heard from each SSRC since the last report.
    private var heard: [UInt32: (level: Int, vad: Bool)] = [:]
    private var nextSSRC: UInt32
    private let counters = Mutex(Counters())
    /// Router thread only: what arrived (unprotected where it lies) and what goes out, so
    /// forwarding a packet allocates nothing.
    private var received = [UInt8](repeating: 0, count: 2048)
    private let fanOut = UDPBatch(capacity: 256)
    /// Receive to send, per forwarded copy (under `lock`).
    private var latency = LatencyHistogram()
    private let challenge = BindingChallenge()
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(host: String, port: Int, advertise: String?) throws(MediaError) {
        socket = try UDPSocket(host: host, port: port)
        advertised = advertise ?? "\(host):\(socket.port)"
        nextSSRC = UInt32.random(in: 0x1000_0000...0x7FFF_FFFF)
    }

    func start() {
        running.store(true, ordering: .sequentiallyConsistent)
        let thread = Thread { [self] in
            while running.load(ordering: .relaxed) {
                guard let (length, from) = socket.receive(into: &received) else { continue }
                handle(length: length, from: from)
            }
            finished.signal()
        }
        thread.name = "majlis-media"
        thread.start()
    }

    func stop() {
        guard running.exchange(false, ordering: .sequentiallyConsistent) else { return }
        finished.wait()
        socket.close()
    }

    var counted: Counters { counters.withLock { $0 } }

    // MARK: Room side

    /// Gives `user` a fresh SSRC and key in `room` (a rejoin rotates them).
    @discardableResult
    func join(room: String, user: String) -> (ssrc: UInt32, key: [UInt8]) {
        lock.lock()
        defer { lock.unlock() }
        if let old = rooms[room]?[user] { participants[old] = nil }
        nextSSRC = nextSSRC &+ 1
        let ssrc = nextSSRC
        let key = HMACSHA256.randomBytes(SRTPSession.keyLength)
        participants[ssrc] = Participant(room: room, user: user, ssrc: ssrc, key: key)
        rooms[room, default: [:]][user] = ssrc
        return (ssrc, key)
    }

    func leave(room: String, user: String) {
        lock.lock()
        defer { lock.unlock() }
        guard let ssrc = rooms[room]?.removeValue(forKey: user) else { return }
        participants[ssrc] = nil
        speakers[room]?.remove(ssrc)
        if rooms[room]?.isEmpty == true { rooms[room] = nil }
    }

    /// Who may be heard in `room` now.
    func setSpeakers(room: String, users: [String]) {
        lock.lock()
        defer { lock.unlock() }
        let map = rooms[room] ?? [:]
        speakers[room] = Set(users.compactMap { map[$0] })
    }

    /// Receive-to-send time of every forwarded copy since the start, in microseconds.
    var forwardingLatency: (p50: Int, p99: Int, max: Int, count: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (latency.percentile(0.5), latency.percentile(0.99), latency.maximum, latency.count)
    }

    /// The SSRCs of these members (those that have one).
    func ssrcs(room: String, users: [String]) -> [String: UInt32] {
        lock.lock()
        defer { lock.unlock() }
        guard let map = rooms[room] else { return [:] }
        var result: [String: UInt32] = [:]
        for user in users { result[user] = map[user] }
        return result
    }

    /// The `media` object of a snapshot for `user`.
    func mediaInfo(room: String, user: String) -> JSONValue? {
        lock.lock()
        defer { lock.unlock() }
        guard let ssrc = rooms[room]?[user], let participant = participants[ssrc] else { return nil }
        return [
            "udp": .string(advertised), "ssrc": .int(Int64(ssrc)), "key": .string(Data(participant.key).base64EncodedString()),
            "suite": "AES_CM_128_HMAC_SHA1_80", "payloadType": .int(Int64(Self.payloadType)),
            "audioLevelExtension": .int(Int64(Self.audioLevelExtension)), "redPayloadType": .int(Int64(Self.redPayloadType)),
            "serverSSRC": .int(Int64(MediaSettings.serverSSRC)),
        ]
    }

    /// The loudest speakers of each room since the last call (at most `top` per room), then
    /// starts counting again.
    func takeLevels(top: Int = 5) -> [String: [SpeakerLevel]] {
        lock.lock()
        defer { lock.unlock() }
        var result: [String: [SpeakerLevel]] = [:]
        for (ssrc, level) in heard {
            guard let participant = participants[ssrc] else { continue }
            result[participant.room, default: []].append(SpeakerLevel(user: participant.user, level: level.level, vad: level.vad))
        }
        heard = [:]
        return result.mapValues { Array($0.sorted { $0.level > $1.level }.prefix(top)) }
    }

    /// Each member's network quality over the last reporting interval, by room: `up` from what
    /// it sent (loss, jitter), `down` from its receiver reports, both with the round trip. Only
    /// members who sent or reported anything.
    func takeQuality() -> [String: [(user: String, up: NetworkQualityLevel, down: NetworkQualityLevel)]] {
        lock.lock()
        defer { lock.unlock() }
        var result: [String: [(user: String, up: NetworkQualityLevel, down: NetworkQualityLevel)]] = [:]
        for participant in participants.values where participant.address != nil && (participant.worstUp != nil || participant.worstDown != nil) {
            let up = NetworkQualityLevel(loss: participant.worstUp?.loss ?? 0, jitter: participant.worstUp?.jitter ?? 0, roundTrip: participant.roundTrip)
            let down = NetworkQualityLevel(loss: participant.worstDown?.loss ?? 0, jitter: participant.worstDown?.jitter ?? 0, roundTrip: participant.roundTrip)
            result[participant.room, default: []].append((participant.user, up, down))
            participant.worstUp = nil
            participant.worstDown = nil
        }
        return result
    }

    /// Once a second: closes each member's reporting interval and sends it an RTCP sender
    /// report (for the round trip) whose report block on its own stream gives the loss its
    /// listeners see: its uplink and the worst downlink in the room, combined. That is what
    /// its sender chooses FEC, RED and bitrate from.
    func sendReports(now: Double = MediaRouter.now()) {
        lock.lock()
        defer { lock.unlock() }
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
            if let loss = participant.downLoss { worstDown[participant.room, default: []].append((participant.ssrc, loss)) }
        }
        let ntp = Self.ntpTime(now)
        for participant in participants.values {
            guard let address = participant.address else { continue }
            var blocks: [RTCPReportBlock] = []
            if let up = participant.upLoss {
                let down = worstDown[participant.room]?.filter { $0.ssrc != participant.ssrc }.map(\.loss).max() ?? 0
                let combined = 1 - (1 - up) * (1 - down)
                blocks.append(RTCPReportBlock(
                    ssrc: participant.ssrc, fractionLost: UInt8(min(255, combined * 256)), cumulativeLost: 0, highestSequence: UInt32(participant.upHighest),
                    jitter: UInt32(participant.upJitter * 48)))
            }
            let report = RTCPPacket.senderReport(ssrc: MediaSettings.serverSSRC, ntpTime: ntp, rtpTime: 0, packetCount: 0, octetCount: 0, reports: blocks)
            if let secured = try? participant.outbound?.protect(rtcp: RTCPPacket.serializeCompound([report])) { socket.send(secured, to: address) }
        }
    }

    /// Milliseconds on the monotonic clock.
    static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1e6
    }

    /// A 64-bit NTP-format time (seconds, fraction) for `milliseconds` on the monotonic clock.
    static func ntpTime(_ milliseconds: Double) -> UInt64 {
        let seconds = UInt64(milliseconds / 1000)
        let fraction = UInt64((milliseconds / 1000 - Double(seconds)) * 4_294_967_296)
        return seconds << 32 | fraction
    }

    /// RTCP from a bound member: receiver reports (its downlink loss and jitter, and the round
    /// trip through the block on our sender reports) and NACKs (sent again from the speaker's
    /// cache, to this member only).
    private func receiveReport(_ packet: [UInt8], from: UDPAddress) {
        guard packet.count >= 8 else { return }
        let ssrc = UInt32(packet[4]) << 24 | UInt32(packet[5]) << 16 | UInt32(packet[6]) << 8 | UInt32(packet[7])
        lock.lock()
        defer { lock.unlock() }
        guard let member = participants[ssrc], member.address == from, let plain = try? member.inbound?.unprotect(srtcp: packet),
            let reports = try? RTCPPacket.parseCompound(plain)
        else {
            count { $0.droppedBadPacket += 1 }
            return
        }
        for report in reports {
            switch report {
            case .receiverReport(_, let blocks):
                var loss = 0.0
                var jitter = 0.0
                for block in blocks {
                    if block.ssrc == MediaSettings.serverSSRC {
                        guard block.lastSenderReport != 0 else { continue }
                        let middle = UInt32(truncatingIfNeeded: Self.ntpTime(Self.now()) >> 16)
                        let units = middle &- block.lastSenderReport &- block.delaySinceLastSenderReport
                        let sample = Double(units) / 65.536
                        if sample < 10_000 { member.roundTrip = member.roundTrip.map { $0 * 0.7 + sample * 0.3 } ?? sample }
                    } else {
                        loss = max(loss, Double(block.fractionLost) / 256)
                        jitter = max(jitter, Double(block.jitter) / 48)
                    }
                }
                member.downLoss = loss
                member.worstDown = (max(member.worstDown?.loss ?? 0, loss), max(member.worstDown?.jitter ?? 0, jitter))
            case .nack(_, let media, let lost):
                guard let speaker = participants[media], speaker.room == member.room, let cache = speaker.sent, let address = member.address else { continue }
                let now = Int64(Self.now())
                var budget = member.repairBudget[media] ?? TokenBucket(capacity: Self.repairBudget, now: now)
                defer { member.repairBudget[media] = budget }
                var asked = Set<UInt16>()
                for sequence in lost where asked.insert(sequence).inserted {
                    guard let original = cache.packet(sequence) else { continue }
                    guard budget.take(capacity: Self.repairBudget, perSecond: Double(Self.repairBudget), now: now) else {
                        count { $0.repairsRefused += 1 }
                        break
                    }
                    guard let packet = member.receivesRED ? original : Self.primaryOnly(original),
                        let secured = try? member.outbound?.protect(rtp: packet)
                    else { continue }
                    socket.send(secured, to: address)
                    count { $0.retransmitted += 1 }
                }
            default:
                break
            }
        }
    }

    /// Sends the prepared copies in one system call; each counts as sent now.
    private func flushFanOut(arrived: UInt64) -> Int {
        let sent = fanOut.send(from: socket)
        let microseconds = Int((DispatchTime.now().uptimeNanoseconds - arrived) / 1_000)
        for _ in 0..<sent { latency.record(microseconds: microseconds) }
        return sent
    }

    /// A RED packet turned into a plain Opus packet of its primary frame (other packets as
    /// they are), for members that do not decode RED.
    static func primaryOnly(_ plain: [UInt8]) -> [UInt8]? {
        guard plain.count >= 2, plain[1] & 0x7F == redPayloadType else { return plain }
        guard var rtp = try? RTPPacket(parsing: plain), let red = try? REDPayload(parsing: rtp.payload) else { return nil }
        rtp.payloadType = red.primaryPayloadType
        rtp.payload = red.primary
        return rtp.serialized()
    }

    // MARK: Router thread

    private func count(_ change: (inout Counters) -> Void) { counters.withLock { change(&$0) } }

    /// Handles the datagram in `received[0..<length]`.
    func handle(length: Int, from: UDPAddress) {
        let arrived = DispatchTime.now().uptimeNanoseconds
        guard length >= 2 else {
            count { $0.droppedBadPacket += 1 }
            return
        }
        if received[0] < 2 {  // STUN: rare, copied
            bind(Array(received.prefix(length)), from: from)
            return
        }
        guard length >= 12, received[0] >> 6 == 2 else {
            count { $0.droppedBadPacket += 1 }
            return
        }
        if (200...206).contains(received[1]) {
            receiveReport(Array(received.prefix(length)), from: from)
            return
        }
        forward(length: length, from: from, arrived: arrived)
    }

    /// Forwards the SRTP packet in `received[0..<length]` to every other bound member of the
    /// sender's room, if the sender may be heard.
    private func forward(length: Int, from: UDPAddress, arrived: UInt64) {
        let ssrc = UInt32(received[8]) << 24 | UInt32(received[9]) << 16 | UInt32(received[10]) << 8 | UInt32(received[11])
        lock.lock()
        defer { lock.unlock() }
        guard let sender = participants[ssrc], sender.address == from, let session = sender.inbound else {
            count { $0.droppedUnbound += 1 }
            return
        }
        guard let plainLength = try? received.withUnsafeMutableBytes({ try session.unprotect(srtpIn: $0, length: length) }) else {
            count { $0.droppedBadPacket += 1 }
            return
        }
        guard speakers[sender.room]?.contains(ssrc) == true else {
            count { $0.droppedNotAllowed += 1 }
            return
        }
        let now = Self.now()
        let sequence = UInt16(received[2]) << 8 | UInt16(received[3])
        let timestamp = UInt32(received[4]) << 24 | UInt32(received[5]) << 16 | UInt32(received[6]) << 8 | UInt32(received[7])
        let retransmission = sender.uplinkNack.received(sequence, at: now)
        if !retransmission {
            sender.uplink.count(sequence, timestamp: timestamp, arrival: now)
            let level = received.withUnsafeBytes { RTPPacket.audioLevel(in: UnsafeRawBufferPointer(rebasing: $0[0..<plainLength]), extensionId: Self.audioLevelExtension) }
            if let level {
                let percent = Int((Double(127 - Int(level.level)) / 127 * 100).rounded())
                let previous = heard[ssrc]
                heard[ssrc] = (max(previous?.level ?? 0, percent), (previous?.vad ?? false) || level.voice)
            }
        }
        if sender.sent == nil { sender.sent = PacketCache() }
        received.withUnsafeBytes { sender.sent?.store(sequence, UnsafeRawBufferPointer(rebasing: $0[0..<plainLength])) }
        let isRED = received[1] & 0x7F == Self.redPayloadType
        var primaryOnly: [UInt8]??
        var sent = 0
        for (_, other) in rooms[sender.room] ?? [:] where other != ssrc {
            guard let receiver = participants[other], let address = receiver.address, let out = receiver.outbound else { continue }
            let packet: [UInt8]?
            if receiver.receivesRED || !isRED {
                packet = nil  // the plain packet as it lies in `received`
            } else {
                if primaryOnly == nil { primaryOnly = .some(Self.primaryOnly(Array(received.prefix(plainLength)))) }
                guard let stripped = primaryOnly ?? nil else { continue }
                packet = stripped
            }
            if fanOut.count == fanOut.capacity { sent += flushFanOut(arrived: arrived) }
            fanOut.add(to: address) { slot in
                let length: Int
                if let packet {
                    guard packet.count <= slot.count else { return nil }
                    packet.withUnsafeBytes { slot.copyMemory(from: $0) }
                    length = packet.count
                } else {
                    received.withUnsafeBytes { slot.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<plainLength])) }
                    length = plainLength
                }
                return try? out.protect(rtpIn: slot, length: length)
            }
        }
        sent += flushFanOut(arrived: arrived)
        // Ask the speaker again for what its uplink lost.
        let lost = sender.uplinkNack.due(at: now)
        if !lost.isEmpty, let address = sender.address,
            let secured = try? sender.outbound?.protect(rtcp: RTCPPacket.serializeCompound([.nack(ssrc: MediaSettings.serverSSRC, mediaSSRC: ssrc, lost: lost)]))
        {
            socket.send(secured, to: address)
        }
        count {
            $0.forwarded += sent
            if !lost.isEmpty { $0.nacksSent += 1 }
        }
    }

    /// A STUN binding: USERNAME is the SSRC in decimal, MESSAGE-INTEGRITY is keyed with its key.
    /// From the member's current address it is answered at once. From any other address (a first
    /// binding, a new network, or a replay or forgery from elsewhere) it is answered 401 with a
    /// nonce for that address, and the media moves there only when a binding carrying that nonce
    /// comes back from it: proof that the address receives.
    private func bind(_ packet: [UInt8], from: UDPAddress) {
        guard let request = try? STUNMessage(parsing: packet), request.type == STUNMessage.MessageType.bindingRequest.rawValue,
            let name = request.username, let ssrc = UInt32(name)
        else {
            count { $0.droppedBadPacket += 1 }
            return
        }
        let now = Int64(Self.now())
        lock.lock()
        guard let participant = participants[ssrc], STUNIntegrity.verify(packet, key: participant.key) else {
            lock.unlock()
            count { $0.droppedBadPacket += 1 }
            return
        }
        let proven = participant.address == from
            || request.attribute(.nonce).map { challenge.verify($0, ssrc: ssrc, address: from, now: now) } == true
        if proven {
            participant.address = from
            participant.receivesRED = request.attributes.contains { $0.type == STUNMessage.AttributeType.receivesRED.rawValue }
        } else {
            var budget = participant.challengeBudget ?? TokenBucket(capacity: Self.challengeBudget, now: now)
            let allowed = budget.take(capacity: Self.challengeBudget, perSecond: Double(Self.challengeBudget), now: now)
            participant.challengeBudget = budget
            guard allowed else {
                lock.unlock()
                count { $0.challenges += 1 }
                return
            }
        }
        let key = participant.key
        lock.unlock()
        let answer: STUNMessage
        if proven {
            count { $0.bindings += 1 }
            answer = STUNMessage(
                type: .bindingSuccess, transactionId: request.transactionId,
                attributes: [.init(type: STUNMessage.AttributeType.xorMappedAddress.rawValue, value: STUNMessage.xorMappedAddress(ipv4: from.octets, port: from.port))])
        } else {
            count { $0.challenges += 1 }
            answer = STUNMessage(
                type: .bindingError, transactionId: request.transactionId,
                attributes: [
                    .init(type: STUNMessage.AttributeType.errorCode.rawValue, value: STUNMessage.errorCode(401, reason: "")),
                    .init(type: STUNMessage.AttributeType.nonce.rawValue, value: challenge.nonce(ssrc: ssrc, address: from, now: now)),
                ])
        }
        socket.send(STUNIntegrity.sign(answer, key: key), to: from)
    }
}
