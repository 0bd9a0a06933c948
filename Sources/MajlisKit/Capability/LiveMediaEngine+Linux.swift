#if os(Linux)
import Foundation
import MajlisAudio
import MajlisProtocol
import MajlisTransport

/// The media capability over the Majlis media plane (docs/protocol.md section 12): binds its UDP
/// address with STUN, sends the microphone as Opus in SRTP every 20 ms while it may publish, and
/// plays what it hears (an adaptive jitter buffer and Opus decoder per speaker, mixed) into a sink.
///
/// On a lossy network it protects what it sends as the server's receiver reports say it must
/// (`ProtectionPolicy`: Opus FEC, RED, bitrate, and frames per packet under what the server says
/// its uplink carries), answers NACKs from a cache of what it sent, and
/// asks the server for what it missed. It rebinds (a new socket, a new binding) when the network
/// changes (`networkChanged()`) or when bindings go unanswered for three seconds.
///
/// Threads: one paced 20 ms clock thread (send, ask, play), one receive thread; state behind `lock`.
public final class LiveMediaEngine: MediaEngine, @unchecked Sendable {
    // Audited: mutable fields live in `current` (locked); `source`, `encoder`, `history`,
    // `applied` and the speakers' decoders are used on the clock thread only.
    private struct Config {
        var server: UDPAddress
        var ssrc: UInt32
        var key: [UInt8]
        var outbound: SRTPSession
        var inbound: SRTPSession
        var payloadType: UInt8
        var levelExtension: UInt8
        var redPayloadType: UInt8?
    }

    /// What the engine counted since it started.
    public struct Statistics: Sendable, Equatable {
        public var sent = 0
        public var retransmitted = 0
        public var nacksSent = 0
        public var recoveredByRedundancy = 0
        public var repairedByRetransmission = 0
        /// Playout slots of everything heard: frames played, recovered from FEC, concealed.
        public var played = 0
        public var recoveredByFEC = 0
        public var concealed = 0
        /// Frames played a pitch period shorter or longer to follow the target delay in speech.
        public var accelerated = 0
        public var stretched = 0
        /// Frames that arrived too late to play.
        public var late = 0
        /// The playout delay the jitter buffers aim for now (the largest), milliseconds.
        public var targetDelay: Double = 0
        public var rebinds = 0
        /// Round trip to the server measured with bindings, milliseconds.
        public var roundTrip: Double?
        /// The protection in use: FEC, earlier frames per packet, bitrate.
        public var fec = false
        public var redundancy = 0
        public var bitrate = 0
        /// 20 ms frames in each packet sent, and what the server last said the uplink carries
        /// (bits per second with headers; nil: no limit).
        public var framesPerPacket = 1
        public var uplinkCapacity: Int?
        /// Frames not sent because they were silence (Opus DTX), and every datagram sent
        /// (media, retransmissions, reports, bindings) with its bytes (without IP and UDP headers).
        public var silentFrames = 0
        public var datagramsSent = 0
        public var bytesSent = 0
    }

    private struct State {
        var config: Config?
        var socket: UDPSocket
        var publishing = false
        var running = false
        var bound = false
        var speakers: [UInt32: RemoteSpeaker] = [:]
        var sequence: UInt16 = UInt16.random(in: 0...UInt16.max)
        var timestamp: UInt32 = UInt32.random(in: 0...UInt32.max)
        var captureVolume = 100
        var playbackVolume = 100
        var mutedRemotes: Set<UInt32> = []
        var policy: ProtectionPolicy
        var sentCache = PacketCache()
        /// Which NACKs are answered (not twice a round trip, within what a thin uplink spares).
        var resends = ResendGate()
        /// The binding handshake (nil until configured), and the bindings still unanswered.
        var binding: MediaBinding?
        var bindings: [[UInt8]: Double] = [:]
        /// When a binding last went unanswered (2 s): this client's path loses packets.
        var pathLossSeen: Double?
        /// When the engine was configured for the room's media (its path is new then).
        var configuredAt: Double = 0
        /// Whether this binding's uplink still wants probing (once publishing), and the probe
        /// packets still to send.
        var probeDue = true
        var probesLeft = 0
        /// When the last 64 packets were sent: how many a report (on about the last second) covers.
        var sentTimes: [Double] = []
        var lastAnswer: Double = 0
        /// When anything authentic last came from the server.
        var lastHeard: Double = 0
        /// The server's last sender report: its NTP middle 32 bits and when it arrived.
        var serverReport: (ntp: UInt32, arrival: Double)?
        var statistics = Statistics()
    }

    private let source: any AudioSource
    private let sink: any AudioSink
    private let encoder: OpusEncoder
    private let lock = NSLock()
    private var current: State
    private var mixer = Mixer()
    /// The last frames sent, by sequence number, for redundant copies.
    private var history: [UInt16: (timestamp: UInt32, payload: [UInt8], voiced: Bool)] = [:]
    /// Frames in a row without voice (or that DTX made near-empty), and how many of them are
    /// still sent.
    private var silentRun = 0
    private static let silenceHangover = 100
    /// Frames encoded but not yet sent (frames travel several to a packet on a thin link).
    private var pending: [(timestamp: UInt32, payload: [UInt8], level: UInt8)] = []
    private var applied: ProtectionPolicy
    private let logger: Logger

    /// An engine reading `source` and playing into `sink`.
    public init(source: any AudioSource, sink: any AudioSink, bitrate: Int = 32_000, logger: Logger = .silent) throws(MajlisError) {
        self.source = source
        self.sink = sink
        self.logger = logger
        do {
            current = State(socket: try Self.makeSocket(), policy: ProtectionPolicy(bitrate: bitrate))
            encoder = try OpusEncoder(bitrate: bitrate)
            try encoder.setDTX(true)
        } catch {
            throw MajlisError.misuse("cannot start media: \(error)")
        }
        applied = current.policy
        current.statistics.bitrate = bitrate
    }

    private static func makeSocket() throws(MediaError) -> UDPSocket {
        try UDPSocket(host: "0.0.0.0", port: 0, receiveTimeoutMilliseconds: 100)
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&current)
    }

    /// Whether the server answered the binding.
    public var isBound: Bool { withState { $0.bound } }

    /// The local UDP port media uses now.
    public var localPort: Int { withState { $0.socket.port } }

    /// What the engine counted.
    public var statistics: Statistics {
        withState { state in
            var statistics = state.statistics
            for speaker in state.speakers.values {
                statistics.recoveredByRedundancy += speaker.recoveredByRedundancy
                statistics.repairedByRetransmission += speaker.repaired
                statistics.played += speaker.slots.played
                statistics.recoveredByFEC += speaker.slots.recovered
                statistics.concealed += speaker.slots.concealed
                statistics.accelerated += speaker.paced.faster
                statistics.stretched += speaker.paced.slower
                statistics.late += speaker.buffer.lateFrames
                statistics.targetDelay = max(statistics.targetDelay, speaker.buffer.targetDelay())
            }
            return statistics
        }
    }

    // MARK: MediaEngine

    public func configure(_ media: JSONValue?) async {
        guard let settings = MediaSettings(media) else {
            logger.warning("the room gave no usable media settings")
            return
        }
        // The same settings again (a resync): keep the sessions, the binding and what each
        // speaker's buffer learned.
        let unchanged = withState { state -> Bool in
            guard let config = state.config, config.ssrc == settings.ssrc, config.key == settings.key, config.server == settings.server else {
                return false
            }
            return state.running
        }
        if unchanged { return }
        guard let outbound = try? SRTPSession(key: settings.key, direction: .outbound),
            let inbound = try? SRTPSession(key: settings.key, direction: .inbound)
        else {
            logger.warning("the room's media key is unusable")
            return
        }
        let config = Config(
            server: settings.server, ssrc: settings.ssrc, key: settings.key, outbound: outbound, inbound: inbound,
            payloadType: settings.payloadType, levelExtension: settings.audioLevelExtension, redPayloadType: settings.redPayloadType)
        let start = withState { state -> Bool in
            state.config = config
            state.binding = MediaBinding(ssrc: settings.ssrc, key: settings.key, receivesRED: settings.redPayloadType != nil, receivesMultiframe: true)
            state.bound = false
            state.speakers = [:]
            state.lastAnswer = MonotonicClock.milliseconds()
            state.configuredAt = state.lastAnswer
            state.probeDue = true
            defer { state.running = true }
            return !state.running
        }
        sendBinding()
        if start {
            Thread.detachNewThread { self.receiveLoop() }
            Thread.detachNewThread { self.clockLoop() }
        }
    }

    public func setPublishing(_ publishing: Bool) async {
        withState { $0.publishing = publishing }
    }

    public func setCaptureVolume(_ volume: Int) async { withState { $0.captureVolume = volume } }

    public func setPlaybackVolume(_ volume: Int) async { withState { $0.playbackVolume = volume } }

    public func setRemoteMuted(ssrc: UInt32, muted: Bool) async {
        withState { state in
            if muted { state.mutedRemotes.insert(ssrc) } else { state.mutedRemotes.remove(ssrc) }
        }
    }

    public func stop() async {
        withState { $0.running = false }
    }

    /// The device moved to another network (or its address may have changed): media continues
    /// from a new socket, bound again at once.
    public func networkChanged() {
        rebind(reason: "the network changed")
    }

    private func rebind(reason: String) {
        guard let socket = try? Self.makeSocket() else {
            logger.warning("cannot open a new media socket")
            return
        }
        withState { state in
            state.socket = socket  // the receive thread lets go of the old one after its next wait
            state.binding?.reset()
            state.bound = false
            state.lastAnswer = MonotonicClock.milliseconds()
            state.statistics.rebinds += 1
            state.probeDue = true  // a new path
        }
        logger.info("media rebinding: \(reason)")
        sendBinding()
    }

    // MARK: Threads

    private func send(_ bytes: [UInt8]) {
        let (socket, server) = withState { state in
            state.statistics.datagramsSent += 1
            state.statistics.bytesSent += bytes.count
            return (state.socket, state.config?.server)
        }
        if let server { socket.send(bytes, to: server) }
    }

    private func sendBinding() {
        let transaction = MediaBinding.transactionId()
        guard let request = withState({ state -> [UInt8]? in
            let now = MonotonicClock.milliseconds()
            if state.bindings.values.contains(where: { now - $0 >= 2_000 }) { state.pathLossSeen = now }
            state.bindings = state.bindings.filter { now - $0.value < 2_000 }
            state.bindings[transaction] = MonotonicClock.milliseconds()
            return state.binding?.request(transactionId: transaction)
        }) else { return }
        send(request)
    }

    /// A probe train: ten padded bindings of 600 bytes, one a frame (about 250 kb/s with
    /// headers, more than any voice sends), so the server can tell how much the uplink carries
    /// before the first word. Sent once a binding is proven and the member publishes.
    private static let probeTrain = 10
    private static let probeSize = 600

    private func sendProbe() {
        guard let request = withState({ state -> [UInt8]? in
            if state.probeDue && state.bound && state.publishing {
                state.probeDue = false
                state.probesLeft = Self.probeTrain
            }
            guard state.probesLeft > 0, let binding = state.binding else { return nil }
            let probe = UplinkProbe(
                index: Self.probeTrain - state.probesLeft, count: Self.probeTrain, sentAt: UInt32(truncatingIfNeeded: Int64(MonotonicClock.milliseconds())))
            state.probesLeft -= 1
            return binding.probe(probe, transactionId: MediaBinding.transactionId(), size: Self.probeSize)
        }) else { return }
        send(request)
    }

    private func receiveLoop() {
        var buffer = [UInt8](repeating: 0, count: 2048)
        while withState({ $0.running }) {
            let socket = withState { $0.socket }
            guard let (length, _) = socket.receive(into: &buffer) else { continue }
            let packet = Array(buffer.prefix(length))
            let now = MonotonicClock.milliseconds()
            switch MediaPacketKind(packet) {
            case .stun: answered(packet, at: now)
            case .rtcp where packet.count >= 8: control(packet, at: now)
            case .rtp where packet.count >= 12: media(packet, at: now)
            case .rtp, .rtcp, .dtls, .unknown: break
            }
        }
    }

    /// A binding answer: bound, and a round-trip sample; or a challenge for this address, answered
    /// at once with the nonce.
    private func answered(_ packet: [UInt8], at now: Double) {
        let challenged = withState { state -> Bool in
            guard let answer = state.binding?.receive(packet), answer != .ignored else { return false }
            state.lastAnswer = now
            state.lastHeard = now
            if let sent = state.bindings.removeValue(forKey: Array(packet[8..<20])) {  // the transaction id (it is STUN, checked)
                let sample = now - sent
                state.statistics.roundTrip = state.statistics.roundTrip.map { $0 * 0.8 + sample * 0.2 } ?? sample
            }
            guard case .bound = answer else { return true }
            state.bound = true
            return false
        }
        if challenged { sendBinding() }
    }

    /// SRTCP from the server: reports on what this client sends, NACKs, sender reports.
    private func control(_ packet: [UInt8], at now: Double) {
        let resend = withState { state -> [[UInt8]] in
            guard let config = state.config, let plain = try? config.inbound.unprotect(srtcp: packet),
                let packets = try? RTCPPacket.parseCompound(plain)
            else { return [] }
            var resend: [[UInt8]] = []
            state.lastHeard = now
            for item in packets {
                switch item {
                case .receiverReport(_, let blocks), .senderReport(_, _, _, _, _, let blocks):
                    if case .senderReport(let ssrc, let ntp, _, _, _, _) = item, ssrc == MediaSettings.serverSSRC {
                        state.serverReport = (UInt32(truncatingIfNeeded: ntp >> 16), now)
                    }
                    for block in blocks where block.ssrc == config.ssrc {
                        // About the packets the report covers: those sent in the second and a half before it came.
                        let packets = state.sentTimes.count { now - $0 < 1_500 }
                        state.policy.update(loss: Double(block.fractionLost) / 256, roundTrip: state.statistics.roundTrip, packets: packets)
                    }
                case .estimatedBitrate(_, let bitrate, let ssrcs) where ssrcs.contains(config.ssrc):
                    let capacity = Int(min(bitrate, 100_000_000))
                    state.policy.update(capacity: capacity)
                    state.statistics.uplinkCapacity = capacity
                case .nack(_, let media, let lost) where media == config.ssrc:
                    for sequence in lost {
                        guard let bytes = state.sentCache.packet(sequence),
                            state.resends.allows(
                                bytes, sequence: sequence, policy: state.policy, roundTrip: state.statistics.roundTrip,
                                levelExtension: config.levelExtension, at: now)
                        else { continue }
                        resend.append(bytes)
                    }
                default:
                    break
                }
            }
            state.statistics.retransmitted += resend.count
            return resend
        }
        for bytes in resend { send(bytes) }
    }

    private func media(_ packet: [UInt8], at now: Double) {
        withState { state in
            guard let config = state.config, let plain = try? config.inbound.unprotect(srtp: packet), let rtp = try? RTPPacket(parsing: plain) else { return }
            state.lastHeard = now
            let speaker: RemoteSpeaker
            if let existing = state.speakers[rtp.ssrc] {
                speaker = existing
            } else {
                // On a path known to lose packets, a new speaker's playout starts with room for a
                // repair instead of learning it mid-sentence; so it does in a call's first 30
                // seconds, before anything is known of the path.
                let lossy = state.pathLossSeen.map { now - $0 < 30_000 } ?? false
                let fresh = now - state.configuredAt < 30_000
                let hint = lossy || fresh ? state.statistics.roundTrip : nil
                guard let made = try? RemoteSpeaker(ssrc: rtp.ssrc, now: now, lossyPathRoundTrip: hint) else { return }
                speaker = made
                state.speakers[rtp.ssrc] = made
            }
            speaker.pathRoundTrip = state.statistics.roundTrip
            speaker.receive(rtp, opusPayloadType: config.payloadType, redPayloadType: config.redPayloadType, levelExtension: config.levelExtension, now: now)
        }
    }

    private func clockLoop() {
        var next = MonotonicClock.milliseconds()
        var tick = 0
        while withState({ $0.running }) {
            next += Double(AudioFormat.frameMilliseconds)
            let wait = next - MonotonicClock.milliseconds()
            if wait > 0 { usleep(UInt32(wait * 1000)) }
            tick += 1
            if tick % 50 == 0 { keepBinding() }  // every second: keeps the binding (and NAT) alive
            if tick % 50 == 25 { sendReceiverReport() }
            sendProbe()
            sendFrame()
            sendNacks()
            playFrame()
        }
    }

    /// Sends a binding; three seconds without an answer or anything else from the server (which
    /// reports every second) means this path is dead: rebind.
    private func keepBinding() {
        let silent = withState { MonotonicClock.milliseconds() - max($0.lastAnswer, $0.lastHeard) }
        if silent > 3_000 {
            rebind(reason: "no binding answer for \(Int(silent)) ms")
        } else {
            sendBinding()
        }
    }

    /// Tells the server how much of each speaker arrived in the last second (RTCP RR), with a
    /// block for the server's own reports so it can measure the round trip.
    private func sendReceiverReport() {
        let now = MonotonicClock.milliseconds()
        let (config, blocks) = withState { state -> (Config?, [RTCPReportBlock]) in
            var blocks: [RTCPReportBlock] = []
            for (ssrc, speaker) in state.speakers {
                let jitter = UInt32(speaker.reception.jitter * Double(AudioFormat.sampleRate) / 1000)
                guard let interval = speaker.reception.takeInterval() else { continue }
                speaker.recentLoss = interval.loss
                blocks.append(RTCPReportBlock(
                    ssrc: ssrc, fractionLost: UInt8(min(255, interval.loss * 256)), cumulativeLost: Int32(interval.lost),
                    highestSequence: UInt32(interval.highest), jitter: jitter))
            }
            if let report = state.serverReport {
                blocks.append(RTCPReportBlock(
                    ssrc: MediaSettings.serverSSRC, fractionLost: 0, cumulativeLost: 0, highestSequence: 0, jitter: 0,
                    lastSenderReport: report.ntp, delaySinceLastSenderReport: UInt32((now - report.arrival) * 65.536)))
            }
            return (state.config, blocks)
        }
        guard let config else { return }
        let report = RTCPPacket.serializeCompound([.receiverReport(ssrc: config.ssrc, reports: Array(blocks.prefix(31)))])
        if let secured = try? config.outbound.protect(rtcp: report) { send(secured) }
    }

    /// Asks the server again for what each speaker's stream is missing.
    private func sendNacks() {
        let now = MonotonicClock.milliseconds()
        let (config, requests) = withState { state -> (Config?, [(UInt32, [UInt16])]) in
            var requests: [(UInt32, [UInt16])] = []
            for (ssrc, speaker) in state.speakers {
                let due = speaker.dueNacks(at: now)
                if !due.isEmpty { requests.append((ssrc, due)) }
            }
            state.statistics.nacksSent += requests.count
            return (state.config, requests)
        }
        guard let config, !requests.isEmpty else { return }
        let packets = requests.map { RTCPPacket.nack(ssrc: config.ssrc, mediaSSRC: $0.0, lost: $0.1) }
        if let secured = try? config.outbound.protect(rtcp: RTCPPacket.serializeCompound(packets)) { send(secured) }
    }

    private func sendFrame() {
        // The microphone is read only while publishing (a file source starts with the seat).
        let (config, sending, timestamp, volume, policy) = withState { state -> (Config?, Bool, UInt32, Int, ProtectionPolicy) in
            state.timestamp &+= UInt32(AudioFormat.frameSamples)
            return (state.config, state.publishing, state.timestamp, state.captureVolume, state.policy)
        }
        guard sending, let config else {
            history = [:]
            pending = []
            return
        }
        let frame = Gain.apply(volume, to: source.nextFrame())
        applyProtection(policy)
        guard let payload = try? encoder.encode(frame) else { return }
        // Opus DTX: in silence the encoder says so in a packet of a byte or two, which is not
        // sent (the listener makes comfort noise); it still sends a real frame now and then.
        // Two seconds of silence pass first, sent as they are: the pauses between words and
        // sentences (a listener's playout starts again after each, which on a lossy path cost
        // 0.4 PESQ when half a second passed first), the last words' redundant copies, and what
        // shows a listener whether the last words' packets were lost.
        let loudness = LevelMeter.audioLevel(frame)
        silentRun = payload.count <= 2 || loudness >= 60 ? silentRun + 1 : 0
        let silent = payload.count <= 2 && silentRun > Self.silenceHangover
        if silent {
            withState { $0.statistics.silentFrames += 1 }
        } else {
            pending.append((timestamp, payload, loudness))
        }
        guard pending.count >= policy.framesPerPacket || (silent && !pending.isEmpty) else { return }
        let frames = pending
        pending = []
        if frames.count > 1 {
            history = [:]  // redundant copies are of one-frame packets only
            var index = 0
            for joined in OpusFrames.joinRuns(frames.map(\.payload)) {
                let count = OpusFrames.count(joined) ?? 1
                let run = frames[index..<min(frames.count, index + count)]
                index += count
                send(payload: joined, timestamp: run.first?.timestamp ?? timestamp, level: run.map(\.level).min() ?? 127, payloadType: config.payloadType, config: config)
            }
            return
        }
        let (frameTimestamp, primary, level) = frames[0]
        let sequence = withState { $0.sequence &+ 1 }
        var body = primary
        var payloadType = config.payloadType
        if let red = config.redPayloadType, policy.redundancy > 0 {
            let blocks = policy.distances.reversed().compactMap { distance -> REDPayload.Block? in
                // Copies of the quiet frames between words too, once reports show loss and the
                // uplink has room for them: a lost one is concealed from the sound before it, which
                // on a path too long for retransmissions cost 0.4-0.8 PESQ at 20% loss. (Before
                // any report, or on a squeezed uplink, a pause's copies would cost as much as the
                // voice's and build a queue.) Only of packets that were `distance` frames earlier
                // (no silence between), as the listener counts.
                guard let earlier = history[sequence &- UInt16(distance)], earlier.voiced || (policy.loss != nil && !policy.squeezed),
                    frameTimestamp &- earlier.timestamp == UInt32(distance * AudioFormat.frameSamples)
                else { return nil }
                return REDPayload.Block(payloadType: config.payloadType, timestampOffset: UInt16(distance * AudioFormat.frameSamples), data: earlier.payload)
            }
            if !blocks.isEmpty {
                body = REDPayload(redundant: blocks, primaryPayloadType: config.payloadType, primary: primary).serialized()
                payloadType = red
            }
        }
        history[sequence] = (frameTimestamp, primary, level < 60)
        history[sequence &- 8] = nil
        send(payload: body, timestamp: frameTimestamp, level: level, payloadType: payloadType, config: config)
    }

    /// Sends one RTP packet with the next sequence number.
    private func send(payload: [UInt8], timestamp: UInt32, level: UInt8, payloadType: UInt8, config: Config) {
        let sequence = withState { state -> UInt16 in
            state.sequence &+= 1
            return state.sequence
        }
        let packet = RTPPacket(
            payloadType: payloadType, sequenceNumber: sequence, timestamp: timestamp, ssrc: config.ssrc,
            extensions: [RTPPacket.audioLevelExtension(id: config.levelExtension, voice: level < 60, level: level)], payload: payload)
        guard let secured = try? config.outbound.protect(rtp: packet.serialized()) else { return }
        withState { state in
            state.sentCache.store(sequence, secured)
            state.statistics.sent += 1
            state.sentTimes.append(MonotonicClock.milliseconds())
            if state.sentTimes.count > 64 { state.sentTimes.removeFirst(state.sentTimes.count - 64) }
        }
        send(secured)
    }

    /// Brings the encoder in line with the policy (clock thread).
    private func applyProtection(_ policy: ProtectionPolicy) {
        guard policy.fec != applied.fec || policy.fecLossPercent != applied.fecLossPercent || policy.bitrate != applied.bitrate
            || policy.redundancy != applied.redundancy || policy.framesPerPacket != applied.framesPerPacket || policy.squeezed != applied.squeezed
        else { return }
        try? encoder.setFEC(policy.fec, expectedLossPercent: policy.fecLossPercent)
        try? encoder.setConstrainedVBR(policy.squeezed)
        try? encoder.setBitrate(policy.bitrate)
        if policy.redundancy != applied.redundancy || policy.fec != applied.fec || policy.framesPerPacket != applied.framesPerPacket {
            logger.info(
                "protection: FEC \(policy.fec ? "on" : "off"), \(policy.redundancy) redundant frames, \(policy.bitrate / 1000) kb/s, \(policy.framesPerPacket * AudioFormat.frameMilliseconds) ms packets")
        }
        applied = policy
        withState { state in
            state.statistics.fec = policy.fec
            state.statistics.redundancy = policy.redundancy
            state.statistics.bitrate = policy.bitrate
            state.statistics.framesPerPacket = policy.framesPerPacket
        }
    }

    private func playFrame() {
        let now = MonotonicClock.milliseconds()
        let (speakers, muted, volume) = withState { state -> ([RemoteSpeaker], Set<UInt32>, Int) in
            // A speaker's buffer outlives pauses, so what it learned of the path is ready when
            // they speak again.
            state.speakers = state.speakers.filter { now - $0.value.lastHeard < 120_000 }
            return (Array(state.speakers.values), state.mutedRemotes, state.playbackVolume)
        }
        var frames: [[Int16]] = []
        for speaker in speakers {
            let pcm = withState { _ in speaker.play(at: now) }
            if muted.contains(speaker.ssrc) { continue }  // still drained, so unmuting resumes in step
            if let pcm { frames.append(pcm) }
        }
        sink.play(frames.isEmpty ? [Int16](repeating: 0, count: AudioFormat.frameSamples) : Gain.apply(volume, to: mixer.mix(frames)))
    }
}
#endif
