import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// The selective forwarding unit: one UDP socket, one thread. Each member of a room gets an
/// SSRC and an SRTP key in its snapshot; it proves it owns its UDP address with a STUN binding
/// signed with that key, then sends SRTP. The router forwards a packet only from a member the
/// room says may be heard (seated, seat not host-muted, mic on, `publish` granted), re-protected
/// for each other bound member of the room; everything else is dropped and counted.
///
/// Thread rules: the router thread handles packets; room executors call `join`, `leave` and
/// `setSpeakers`. Both take `lock` (held for one packet at a time).
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
        /// Uplink: the highest sequence seen and packets received in this interval.
        var highestSequence: UInt16?
        var firstSequence: UInt16?
        var receivedInInterval = 0
        /// Downlink: the worst loss fraction the member reported in this interval.
        var reportedLoss: Double?
        private var inboundSession: SRTPSession?
        private var outboundSession: SRTPSession?

        init(room: String, user: String, ssrc: UInt32, key: [UInt8]) {
            self.room = room
            self.user = user
            self.ssrc = ssrc
            self.key = key
        }

        /// Unprotects what this member sends.
        var inbound: SRTPSession? {
            if inboundSession == nil { inboundSession = try? SRTPSession(key: key, direction: .inbound) }
            return inboundSession
        }

        /// Protects what is forwarded to this member.
        var outbound: SRTPSession? {
            if outboundSession == nil { outboundSession = try? SRTPSession(key: key, direction: .outbound) }
            return outboundSession
        }
    }

    /// What the router counted.
    struct Counters: Sendable, Equatable {
        var forwarded = 0
        var droppedNotAllowed = 0
        var droppedUnbound = 0
        var droppedBadPacket = 0
        var bindings = 0
    }

    static let payloadType: UInt8 = 111
    static let audioLevelExtension: UInt8 = 1

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
            var buffer = [UInt8](repeating: 0, count: 2048)
            while running.load(ordering: .relaxed) {
                guard let (length, from) = socket.receive(into: &buffer) else { continue }
                handle(Array(buffer.prefix(length)), from: from)
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
            "audioLevelExtension": .int(Int64(Self.audioLevelExtension)),
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

    /// Each member's network quality since the last call, by room: `up` from the sequence
    /// numbers of what it sent (only members who sent), `down` from its receiver reports.
    func takeQuality() -> [String: [(user: String, up: NetworkQualityLevel, down: NetworkQualityLevel)]] {
        lock.lock()
        defer { lock.unlock() }
        var result: [String: [(user: String, up: NetworkQualityLevel, down: NetworkQualityLevel)]] = [:]
        for participant in participants.values where participant.address != nil {
            var up = NetworkQualityLevel.excellent
            if let first = participant.firstSequence, let highest = participant.highestSequence {
                let expected = Int(highest &- first) + 1
                up = NetworkQualityLevel(loss: max(0, Double(expected - participant.receivedInInterval) / Double(max(1, expected))))
                participant.firstSequence = nil
                participant.highestSequence = nil
                participant.receivedInInterval = 0
            } else if participant.reportedLoss == nil {
                continue  // neither sent nor reported: nothing measured
            }
            let down = participant.reportedLoss.map { NetworkQualityLevel(loss: $0) } ?? .excellent
            participant.reportedLoss = nil
            result[participant.room, default: []].append((participant.user, up, down))
        }
        return result
    }

    /// RTCP from a bound member: its receiver reports give its downlink loss.
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
        for case .receiverReport(_, let blocks) in reports {
            for block in blocks {
                let loss = Double(block.fractionLost) / 256
                member.reportedLoss = max(member.reportedLoss ?? 0, loss)
            }
        }
    }

    // MARK: Router thread

    private func count(_ change: (inout Counters) -> Void) { counters.withLock { change(&$0) } }

    func handle(_ packet: [UInt8], from: UDPAddress) {
        if STUNMessage.looksLikeSTUN(packet) {
            bind(packet, from: from)
            return
        }
        guard packet.count >= 12, packet[0] >> 6 == 2 else {
            count { $0.droppedBadPacket += 1 }
            return
        }
        if (200...206).contains(packet[1]) {
            receiveReport(packet, from: from)
            return
        }
        let ssrc = UInt32(packet[8]) << 24 | UInt32(packet[9]) << 16 | UInt32(packet[10]) << 8 | UInt32(packet[11])
        lock.lock()
        defer { lock.unlock() }
        guard let sender = participants[ssrc], sender.address == from else {
            count { $0.droppedUnbound += 1 }
            return
        }
        guard let plain = try? sender.inbound?.unprotect(srtp: packet) else {
            count { $0.droppedBadPacket += 1 }
            return
        }
        guard speakers[sender.room]?.contains(ssrc) == true else {
            count { $0.droppedNotAllowed += 1 }
            return
        }
        let sequence = UInt16(plain[2]) << 8 | UInt16(plain[3])
        sender.receivedInInterval += 1
        if sender.firstSequence == nil { sender.firstSequence = sequence }
        if sender.highestSequence.map({ Int16(bitPattern: sequence &- $0) > 0 }) ?? true { sender.highestSequence = sequence }
        if let rtp = try? RTPPacket(parsing: plain), let level = rtp.audioLevel(extensionId: Self.audioLevelExtension) {
            let percent = Int((Double(127 - Int(level.level)) / 127 * 100).rounded())
            let previous = heard[ssrc]
            heard[ssrc] = (max(previous?.level ?? 0, percent), (previous?.vad ?? false) || level.voice)
        }
        var sent = 0
        for (_, other) in rooms[sender.room] ?? [:] where other != ssrc {
            guard let receiver = participants[other], let address = receiver.address,
                let secured = try? receiver.outbound?.protect(rtp: plain)
            else { continue }
            socket.send(secured, to: address)
            sent += 1
        }
        count { $0.forwarded += sent }
    }

    /// A STUN binding: USERNAME is the SSRC in decimal, MESSAGE-INTEGRITY is keyed with its key.
    private func bind(_ packet: [UInt8], from: UDPAddress) {
        guard let request = try? STUNMessage(parsing: packet), request.type == STUNMessage.MessageType.bindingRequest.rawValue,
            let name = request.username, let ssrc = UInt32(name)
        else {
            count { $0.droppedBadPacket += 1 }
            return
        }
        lock.lock()
        let participant = participants[ssrc]
        let verified = participant.map { STUNIntegrity.verify(packet, key: $0.key) } ?? false
        if verified { participant?.address = from }
        lock.unlock()
        guard verified, let participant else {
            count { $0.droppedBadPacket += 1 }
            return
        }
        count { $0.bindings += 1 }
        let answer = STUNMessage(
            type: .bindingSuccess, transactionId: request.transactionId,
            attributes: [.init(type: STUNMessage.AttributeType.xorMappedAddress.rawValue, value: STUNMessage.xorMappedAddress(ipv4: from.octets, port: from.port))])
        socket.send(STUNIntegrity.sign(answer, key: participant.key), to: from)
    }
}
