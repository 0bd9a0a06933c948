#if os(Linux)
import MajlisAudio
import MajlisProtocol
import MajlisTransport

/// A client's media plane (docs/protocol.md section 12) as a state machine with no I/O: it takes
/// the room's media settings, datagrams from the server, microphone frames and the time, and
/// gives back the datagrams to send and the 20 ms of sound to play. `LiveMediaEngine` hosts it
/// on a socket and a paced clock; `VirtualCall` runs it on virtual time, so a call through a
/// simulated network takes a fraction of its length and repeats exactly by seed.
///
/// It binds its address with STUN (answering the server's challenge), sends the microphone as
/// Opus in SRTP while it may publish, protected as the server's reports say it must be
/// (`ProtectionPolicy`: FEC, RED, bitrate, frames per packet under what the uplink carries),
/// answers NACKs from a cache of what it sent, asks for what it missed, and plays each speaker
/// through an adaptive jitter buffer and decoder, mixed. Three seconds without anything from
/// the server ask the host for a new socket (`Tick.rebind`).
///
/// One owner at a time: the host serializes every call (the live engine holds a lock).
public final class MediaClientCore {
    /// What one 20 ms tick produced.
    public struct Tick {
        /// Datagrams for the server, in order.
        public var datagrams: [[UInt8]] = []
        /// The 20 ms to play (the mix of every speaker heard, silence when none): mono, or
        /// interleaved stereo when a speaker sends stereo (`playoutChannels`).
        public var playout: [Int16] = []
        public var playoutChannels = 1
        /// With `separateSpeakers`: each speaker's 20 ms apart, mono (muted ones left out, each at
        /// its own volume and the playback volume), for spatial sound.
        public var speakers: [(ssrc: UInt32, frame: [Int16])] = []
        /// Set when the path went silent: the host moves to a new socket before sending
        /// `datagrams` (they bind the new address).
        public var rebind: String?
    }

    struct Config {
        var server: UDPAddress
        var ssrc: UInt32
        var key: [UInt8]
        var outbound: SRTPSession
        var inbound: SRTPSession
        var payloadType: UInt8
        var levelExtension: UInt8
        var redPayloadType: UInt8?
    }

    private var config: Config?
    /// Whether the microphone is sent (the host reads a frame for each tick while it is).
    public var publishing = false
    public var captureVolume = 100
    public var playbackVolume = 100
    public var mutedRemotes: Set<UInt32> = []
    /// Each remote speaker's own playout volume, 0...400 (absent: 100).
    public var remoteVolumes: [UInt32: Int] = [:]
    /// Whether each tick also hands out every speaker's frame apart (spatial sound).
    public var separateSpeakers = false
    private(set) var bound = false
    private var speakers: [UInt32: RemoteSpeaker] = [:]
    private var sequence: UInt16
    private var timestamp: UInt32
    private var policy: ProtectionPolicy
    private var sentCache = PacketCache()
    /// Which NACKs are answered (not twice a round trip, within what a thin uplink spares).
    private var resends = ResendGate()
    /// The binding handshake (nil until configured), and the bindings still unanswered.
    private var binding: MediaBinding?
    private var bindings: [[UInt8]: Double] = [:]
    /// When a binding last went unanswered (2 s): this client's path loses packets.
    private var pathLossSeen: Double?
    /// When the core was configured for the room's media (its path is new then).
    private var configuredAt: Double = 0
    /// Whether this binding's uplink still wants probing (once publishing), and the probe
    /// packets still to send.
    private var probeDue = true
    private var probesLeft = 0
    /// When the last 64 packets were sent: how many a report (on about the last second) covers.
    private var sentTimes: [Double] = []
    private var lastAnswer: Double = 0
    private var lastBindingSent = -Double.infinity
    /// When anything authentic last came from the server.
    private var lastHeard: Double = 0
    /// The server's last sender report: its NTP middle 32 bits and when it arrived.
    private var serverReport: (ntp: UInt32, arrival: Double)?
    private var counted = LiveMediaEngine.Statistics()
    private var ticks = 0

    private let encoder: OpusEncoder
    private var mixer = Mixer()
    /// The last frames sent, by sequence number, for redundant copies.
    private var history: [UInt16: (timestamp: UInt32, payload: [UInt8], voiced: Bool)] = [:]
    /// Frames in a row without voice (or that DTX made near-empty), and how many of them are
    /// still sent.
    private var silentRun = 0
    private let profile: AudioProfile
    private static let silenceHangover = 100
    /// Frames encoded but not yet sent (frames travel several to a packet on a thin link).
    private var pending: [(timestamp: UInt32, payload: [UInt8], level: UInt8)] = []
    private var applied: ProtectionPolicy
    private let logger: Logger
    /// Datagrams made while handling the current call.
    private var outgoing: [[UInt8]] = []

    /// A core sending Opus at `bitrate` (nil: the profile's); `sequence` and `timestamp` start
    /// its RTP numbering (random by default).
    public init(
        bitrate: Int? = nil, profile: AudioProfile = .speech, sequence: UInt16 = .random(in: 0...UInt16.max),
        timestamp: UInt32 = .random(in: 0...UInt32.max), logger: Logger = .silent
    ) throws(AudioError) {
        let bitrate = bitrate ?? profile.bitrate
        self.profile = profile
        encoder = try OpusEncoder(bitrate: bitrate, music: profile.isMusic, channels: profile.channels)
        // Music is not cut in its quiet passages.
        try encoder.setDTX(profile == .speech)
        policy = ProtectionPolicy(bitrate: bitrate)
        applied = policy
        counted.redundancy = policy.redundancy
        self.sequence = sequence
        self.timestamp = timestamp
        self.logger = logger
        counted.bitrate = bitrate
    }

    /// Where datagrams go (nil until configured).
    public var server: UDPAddress? { config?.server }

    /// Whether the server answered the binding.
    public var isBound: Bool { bound }

    /// What the core counted since it started.
    public var statistics: LiveMediaEngine.Statistics {
        var statistics = counted
        for speaker in speakers.values {
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

    /// Whether `settings` are the ones in use (a resync): nothing to do then.
    public func isConfigured(for settings: MediaSettings) -> Bool {
        guard let config else { return false }
        return config.ssrc == settings.ssrc && config.key == settings.key && config.server == settings.server
    }

    /// Uses the room's media settings from now on (a new path: bindings, speakers and
    /// probing start again); returns the binding request to send.
    public func configure(_ settings: MediaSettings, now: Double) throws(MediaError) -> [[UInt8]] {
        let outbound = try SRTPSession(key: settings.key, direction: .outbound)
        let inbound = try SRTPSession(key: settings.key, direction: .inbound)
        config = Config(
            server: settings.server, ssrc: settings.ssrc, key: settings.key, outbound: outbound, inbound: inbound,
            payloadType: settings.payloadType, levelExtension: settings.audioLevelExtension, redPayloadType: settings.redPayloadType)
        binding = MediaBinding(ssrc: settings.ssrc, key: settings.key, receivesRED: settings.redPayloadType != nil, receivesMultiframe: true)
        bound = false
        speakers = [:]
        lastAnswer = now
        configuredAt = now
        probeDue = true
        return collect { sendBinding(at: now) }
    }

    /// The host moved to a new socket (the network changed, or the path went silent): binds
    /// the new address; returns the datagrams to send from it.
    public func rebind(reason: String, now: Double) -> [[UInt8]] {
        collect { restartBinding(reason: reason, at: now) }
    }

    /// Takes one datagram from the server, arrived at `now`; returns the datagrams to send.
    public func receive(_ packet: [UInt8], now: Double) -> [[UInt8]] {
        collect {
            switch MediaPacketKind(packet) {
            case .stun: answered(packet, at: now)
            case .rtcp where packet.count >= 8: control(packet, at: now)
            case .rtp where packet.count >= 12: media(packet, at: now)
            case .rtp, .rtcp, .dtls, .unknown: break
            }
        }
    }

    /// One 20 ms tick at `now`: bindings and reports when due, the next frame of `microphone`
    /// (read only while publishing), repairs to ask for, and the sound to play.
    public func tick(now: Double, microphone: [Int16]?) -> Tick {
        var tick = Tick()
        tick.datagrams = collect {
            ticks += 1
            tick.rebind = keepBinding(at: now)
            if ticks % 50 == 25 { sendReceiverReport(at: now) }
            sendProbe(at: now)
            sendFrame(microphone, at: now)
            sendNacks(at: now)
        }
        (tick.playout, tick.playoutChannels, tick.speakers) = play(at: now)
        return tick
    }

    private func collect(_ body: () -> Void) -> [[UInt8]] {
        outgoing = []
        body()
        defer { outgoing = [] }
        return outgoing
    }

    private func send(_ bytes: [UInt8]) {
        guard config != nil else { return }
        counted.datagramsSent += 1
        counted.bytesSent += bytes.count
        outgoing.append(bytes)
    }

    // MARK: Binding

    private func sendBinding(at now: Double) {
        lastBindingSent = now
        let transaction = MediaBinding.transactionId()
        if bindings.values.contains(where: { now - $0 >= 2_000 }) { pathLossSeen = now }
        bindings = bindings.filter { now - $0.value < 2_000 }
        bindings[transaction] = now
        guard let request = binding?.request(transactionId: transaction) else { return }
        send(request)
    }

    private func restartBinding(reason: String, at now: Double) {
        binding?.reset()
        bound = false
        lastAnswer = now
        counted.rebinds += 1
        probeDue = true  // a new path
        logger.info("media rebinding: \(reason)")
        sendBinding(at: now)
    }

    /// How often a binding is sent: once a second while the server answers (it keeps the
    /// binding and the NAT alive), four times a second while it does not (not bound yet, or the
    /// last answer is over a second and a half old; the server answers a member's unproven
    /// bindings five times a second at most). Binding takes four packets (a request, the
    /// challenge, the request with its nonce, the answer): at 40% loss on each leg one try in
    /// eight gets through, and a try a second left listeners unbound, hearing nothing, for
    /// the first eight seconds of a call.
    static let bindingInterval = 1_000.0
    static let bindingRetryInterval = 250.0

    /// Sends a binding when one is due; three seconds without an answer or anything else from
    /// the server (which reports every second) on a path that was bound means it is dead: a new
    /// socket (returns why). A path never bound keeps trying from the same socket.
    private func keepBinding(at now: Double) -> String? {
        guard binding != nil else { return nil }
        let answered = max(lastAnswer, lastHeard)
        let interval = bound && now - answered < 1_500 ? Self.bindingInterval : Self.bindingRetryInterval
        guard now - lastBindingSent >= interval else { return nil }
        let silent = now - answered
        guard bound, silent > 3_000 else {
            sendBinding(at: now)
            return nil
        }
        let reason = "no binding answer for \(Int(silent)) ms"
        restartBinding(reason: reason, at: now)
        return reason
    }

    /// A probe train: ten padded bindings of 600 bytes, one a frame (about 250 kb/s with
    /// headers, more than any voice sends), so the server can tell how much the uplink carries
    /// before the first word. Sent once a binding is proven and the member publishes.
    private static let probeTrain = 10
    private static let probeSize = 600

    private func sendProbe(at now: Double) {
        if probeDue && bound && publishing {
            probeDue = false
            probesLeft = Self.probeTrain
        }
        guard probesLeft > 0, let binding else { return }
        let probe = UplinkProbe(index: Self.probeTrain - probesLeft, count: Self.probeTrain, sentAt: UInt32(truncatingIfNeeded: Int64(now)))
        probesLeft -= 1
        send(binding.probe(probe, transactionId: MediaBinding.transactionId(), size: Self.probeSize))
    }

    /// A binding answer: bound, and a round-trip sample; or a challenge for this address, answered
    /// at once with the nonce.
    private func answered(_ packet: [UInt8], at now: Double) {
        guard let answer = binding?.receive(packet), answer != .ignored else { return }
        lastAnswer = now
        lastHeard = now
        if let sent = bindings.removeValue(forKey: Array(packet[8..<20])) {  // the transaction id (it is STUN, checked)
            let sample = now - sent
            counted.roundTrip = counted.roundTrip.map { $0 * 0.8 + sample * 0.2 } ?? sample
        }
        if case .bound = answer {
            bound = true
        } else {
            sendBinding(at: now)
        }
    }

    // MARK: Receiving

    /// SRTCP from the server: reports on what this client sends, NACKs, sender reports.
    private func control(_ packet: [UInt8], at now: Double) {
        guard let config, let plain = try? config.inbound.unprotect(srtcp: packet), let packets = try? RTCPPacket.parseCompound(plain) else { return }
        lastHeard = now
        for item in packets {
            switch item {
            case .receiverReport(_, let blocks), .senderReport(_, _, _, _, _, let blocks):
                if case .senderReport(let ssrc, let ntp, _, _, _, _) = item, ssrc == MediaSettings.serverSSRC {
                    serverReport = (UInt32(truncatingIfNeeded: ntp >> 16), now)
                }
                for block in blocks where block.ssrc == config.ssrc {
                    // About the packets the report covers: those sent in the second and a half before it came.
                    let packets = sentTimes.count { now - $0 < 1_500 }
                    policy.update(loss: Double(block.fractionLost) / 256, roundTrip: counted.roundTrip, packets: packets)
                }
            case .estimatedBitrate(_, let bitrate, let ssrcs) where ssrcs.contains(config.ssrc):
                let capacity = Int(min(bitrate, 100_000_000))
                policy.update(capacity: capacity)
                counted.uplinkCapacity = capacity
            case .nack(_, let media, let lost) where media == config.ssrc:
                for sequence in lost {
                    guard let bytes = sentCache.packet(sequence),
                        resends.allows(bytes, sequence: sequence, policy: policy, roundTrip: counted.roundTrip, levelExtension: config.levelExtension, at: now)
                    else { continue }
                    counted.retransmitted += 1
                    send(bytes)
                }
            default:
                break
            }
        }
    }

    private func media(_ packet: [UInt8], at now: Double) {
        guard let config, let plain = try? config.inbound.unprotect(srtp: packet), let rtp = try? RTPPacket(parsing: plain) else { return }
        lastHeard = now
        let speaker: RemoteSpeaker
        if let existing = speakers[rtp.ssrc] {
            speaker = existing
        } else {
            // On a path known to lose packets, a new speaker's playout starts with room for a
            // repair instead of learning it mid-sentence; so it does in a call's first 30
            // seconds, before anything is known of the path, unless the server is a few
            // milliseconds away (a LAN, this machine), where a repair takes no time worth
            // leaving room for: there playout starts at the jitter's depth, not 250 ms deeper
            // for two seconds and 100 ms for fifteen (a clean call's first sentences played that
            // late, then were drawn in mid-speech: PESQ 3.40 where plain Opus has 3.75).
            let lossy = pathLossSeen.map { now - $0 < 30_000 } ?? false
            let fresh = now - configuredAt < 30_000 && (counted.roundTrip ?? 0) >= RemoteSpeaker.nearbyRoundTrip
            guard let made = try? RemoteSpeaker(ssrc: rtp.ssrc, now: now, lossyPathRoundTrip: lossy || fresh ? counted.roundTrip : nil) else { return }
            speaker = made
            speakers[rtp.ssrc] = made
        }
        speaker.pathRoundTrip = counted.roundTrip
        speaker.receive(rtp, opusPayloadType: config.payloadType, redPayloadType: config.redPayloadType, levelExtension: config.levelExtension, now: now)
    }

    // MARK: Sending

    /// Tells the server how much of each speaker arrived in the last second (RTCP RR), with a
    /// block for the server's own reports so it can measure the round trip.
    private func sendReceiverReport(at now: Double) {
        guard let config else { return }
        var blocks: [RTCPReportBlock] = []
        for (ssrc, speaker) in speakers {
            let jitter = UInt32(speaker.reception.jitter * Double(AudioFormat.sampleRate) / 1000)
            guard let interval = speaker.reception.takeInterval() else { continue }
            speaker.recentLoss = interval.loss
            blocks.append(RTCPReportBlock(
                ssrc: ssrc, fractionLost: UInt8(min(255, interval.loss * 256)), cumulativeLost: Int32(interval.lost),
                highestSequence: UInt32(interval.highest), jitter: jitter))
        }
        if let report = serverReport {
            blocks.append(RTCPReportBlock(
                ssrc: MediaSettings.serverSSRC, fractionLost: 0, cumulativeLost: 0, highestSequence: 0, jitter: 0,
                lastSenderReport: report.ntp, delaySinceLastSenderReport: UInt32((now - report.arrival) * 65.536)))
        }
        let report = RTCPPacket.serializeCompound([.receiverReport(ssrc: config.ssrc, reports: Array(blocks.prefix(31)))])
        if let secured = try? config.outbound.protect(rtcp: report) { send(secured) }
    }

    /// Asks the server again for what each speaker's stream is missing.
    private func sendNacks(at now: Double) {
        guard let config else { return }
        var packets: [RTCPPacket] = []
        for (ssrc, speaker) in speakers {
            let due = speaker.dueNacks(at: now)
            if !due.isEmpty { packets.append(RTCPPacket.nack(ssrc: config.ssrc, mediaSSRC: ssrc, lost: due)) }
        }
        guard !packets.isEmpty else { return }
        counted.nacksSent += packets.count
        if let secured = try? config.outbound.protect(rtcp: RTCPPacket.serializeCompound(packets)) { send(secured) }
    }

    private func sendFrame(_ microphone: [Int16]?, at now: Double) {
        timestamp &+= UInt32(AudioFormat.frameSamples)
        guard publishing, let config, let microphone else {
            history = [:]
            pending = []
            return
        }
        let frame = Gain.apply(captureVolume, to: microphone)
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
        let silent = profile == .speech && payload.count <= 2 && silentRun > Self.silenceHangover
        if silent {
            counted.silentFrames += 1
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
                send(payload: joined, timestamp: run.first?.timestamp ?? timestamp, level: run.map(\.level).min() ?? 127, payloadType: config.payloadType, config: config, at: now)
            }
            return
        }
        let (frameTimestamp, primary, level) = frames[0]
        let next = sequence &+ 1
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
                guard let earlier = history[next &- UInt16(distance)], earlier.voiced || (policy.loss != nil && !policy.squeezed),
                    frameTimestamp &- earlier.timestamp == UInt32(distance * AudioFormat.frameSamples)
                else { return nil }
                return REDPayload.Block(payloadType: config.payloadType, timestampOffset: UInt16(distance * AudioFormat.frameSamples), data: earlier.payload)
            }
            if !blocks.isEmpty {
                body = REDPayload(redundant: blocks, primaryPayloadType: config.payloadType, primary: primary).serialized()
                payloadType = red
            }
        }
        history[next] = (frameTimestamp, primary, level < 60)
        history[next &- 8] = nil
        send(payload: body, timestamp: frameTimestamp, level: level, payloadType: payloadType, config: config, at: now)
    }

    /// Sends one RTP packet with the next sequence number.
    private func send(payload: [UInt8], timestamp: UInt32, level: UInt8, payloadType: UInt8, config: Config, at now: Double) {
        sequence &+= 1
        let packet = RTPPacket(
            payloadType: payloadType, sequenceNumber: sequence, timestamp: timestamp, ssrc: config.ssrc,
            extensions: [RTPPacket.audioLevelExtension(id: config.levelExtension, voice: level < 60, level: level)], payload: payload)
        guard let secured = try? config.outbound.protect(rtp: packet.serialized()) else { return }
        sentCache.store(sequence, secured)
        counted.sent += 1
        sentTimes.append(now)
        if sentTimes.count > 64 { sentTimes.removeFirst(sentTimes.count - 64) }
        send(secured)
    }

    /// Brings the encoder in line with the policy.
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
        counted.fec = policy.fec
        counted.redundancy = policy.redundancy
        counted.bitrate = policy.bitrate
        counted.framesPerPacket = policy.framesPerPacket
    }

    // MARK: Playing

    /// The next 20 ms of everything heard, mixed (in stereo when a speaker sends stereo), and
    /// (with `separateSpeakers`) apart.
    private func play(at now: Double) -> ([Int16], Int, [(ssrc: UInt32, frame: [Int16])]) {
        // A speaker's buffer outlives pauses, so what it learned of the path is ready when
        // they speak again.
        speakers = speakers.filter { now - $0.value.lastHeard < 120_000 }
        var frames: [(pcm: [Int16], channels: Int)] = []
        var apart: [(ssrc: UInt32, frame: [Int16])] = []
        for speaker in speakers.values.sorted(by: { $0.ssrc < $1.ssrc }) {
            let pcm = speaker.play(at: now)
            if mutedRemotes.contains(speaker.ssrc) { continue }  // still drained, so unmuting resumes in step
            guard let pcm else { continue }
            let frame = remoteVolumes[speaker.ssrc].map { Gain.apply($0, to: pcm) } ?? pcm
            frames.append((frame, speaker.channels))
            if separateSpeakers {
                let mono = speaker.channels == 2 ? Channels.downmix(frame) : frame
                apart.append((speaker.ssrc, Gain.apply(playbackVolume, to: mono)))
            }
        }
        guard !frames.isEmpty else { return ([Int16](repeating: 0, count: AudioFormat.frameSamples), 1, apart) }
        let channels = frames.contains { $0.channels == 2 } ? 2 : 1
        let mixed = mixer.mix(frames.map { Channels.convert($0.pcm, from: $0.channels, to: channels) })
        return (Gain.apply(playbackVolume, to: mixed), channels, apart)
    }
}
#endif
