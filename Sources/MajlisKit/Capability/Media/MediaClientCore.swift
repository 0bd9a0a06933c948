#if canImport(MajlisAudio)
import MajlisAudio
import MajlisProtocol
import MajlisTransport

/// A client's media plane (docs/protocol.md section 12) as a state machine with no I/O: it takes
/// the room's media settings, datagrams from the server, microphone frames, settings
/// (`MediaCommand`) and the time, and gives back the datagrams to send and the 20 ms of sound to
/// play. `LiveMediaEngine` hosts it on a socket, a device and a paced clock; `VirtualCall` runs
/// it on virtual time, so a call through a simulated network takes a fraction of its length and
/// repeats exactly by seed, through the whole audio path the live engine runs.
///
/// It keeps the path: it binds its address with STUN (answering the server's challenge),
/// probes the uplink, and measures the round trip; three seconds without anything from the
/// server ask the host for a new socket (`Tick.rebind`). What goes out is `MediaUplink`'s
/// (Opus in SRTP, protected as the server's reports say, NACKs answered); what comes in is
/// `MediaDownlink`'s (a jitter buffer and decoder per speaker, repairs asked for, mixed or
/// placed). Around both sits the voice pipeline: processing, the voice effect, music, in-ear
/// monitoring and the app's taps.
///
/// One owner at a time: the host serializes every call (the live engine holds a lock).
public final class MediaClientCore {
    /// What one 20 ms tick produced.
    public struct Tick {
        /// Datagrams for the server, in order.
        public var datagrams: [[UInt8]] = []
        /// The 20 ms to play, in `playbackChannels` (silence when nothing is heard).
        public var playout: [Int16] = []
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
    private var uplink: MediaUplink
    private var downlink = MediaDownlink()
    /// Processing, the voice effect, music, monitoring and the taps around the two.
    private let pipeline: VoicePipeline
    /// The channels of what is played (the device's).
    public let playbackChannels: Int
    private(set) var bound = false
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
    private var lastAnswer: Double = 0
    private var lastBindingSent = -Double.infinity
    /// When anything authentic last came from the server.
    private var lastHeard: Double = 0
    /// What the path counted: round trip, rebinds, NACKs, datagrams.
    private var counted = MediaStatistics()
    private var ticks = 0
    private let logger: Logger
    /// Datagrams made while handling the current call.
    private var outgoing: [[UInt8]] = []

    /// A core sending Opus at `bitrate` (nil: the profile's) with the microphone `processing`
    /// and voice `effect`, playing in `playbackChannels` (2: spatial sound may place speakers);
    /// `sequence` and `timestamp` start its RTP numbering (random by default).
    public init(
        bitrate: Int? = nil, profile: AudioProfile = .speech, processing: VoiceProcessing = .off, effect: VoiceEffect = .none, playbackChannels: Int = 1,
        sequence: UInt16 = .random(in: 0...UInt16.max), timestamp: UInt32 = .random(in: 0...UInt32.max), logger: Logger = .silent
    ) throws(AudioError) {
        uplink = try MediaUplink(bitrate: bitrate ?? profile.bitrate, profile: profile, sequence: sequence, timestamp: timestamp, logger: logger)
        pipeline = try VoicePipeline(processing: processing, effect: effect)
        pipeline.sendChannels = profile.channels
        self.playbackChannels = playbackChannels
        self.logger = logger
    }

    /// Whether the microphone is sent.
    public var publishing: Bool { uplink.publishing }

    /// Whether a microphone frame is wanted this tick: while publishing, and for a recording (not
    /// `live`) only once the path is bound, so none of it is spoken into a path being set up.
    public func wantsMicrophone(live: Bool) -> Bool { uplink.publishing && (bound || live) }

    /// Applies one setting (the host hands them over in the order asked).
    public func apply(_ command: MediaCommand) {
        switch command {
        case .publish(let publishing): uplink.publishing = publishing
        case .captureVolume(let volume): uplink.captureVolume = volume
        case .playbackVolume(let volume): downlink.playbackVolume = volume
        case .muteRemote(let ssrc, let muted):
            if muted { downlink.mutedRemotes.insert(ssrc) } else { downlink.mutedRemotes.remove(ssrc) }
        case .remoteVolume(let ssrc, let volume): downlink.remoteVolumes[ssrc] = volume == 100 ? nil : min(400, max(0, volume))
        case .processing(let processing):
            do { try pipeline.apply(processing) } catch { logger.warning("the voice pipeline refused a setting: \(error)") }
        case .effect(let effect):
            do { try pipeline.apply(effect) } catch { logger.warning("the voice pipeline refused a setting: \(error)") }
        case .play(let track): pipeline.add(track)
        case .monitor(let volume): pipeline.monitorVolume = min(Gain.range.upperBound, max(0, volume))
        case .spatial(let positions):
            do {
                if positions != nil && playbackChannels != 2 {
                    logger.warning("spatial sound needs a stereo speaker: playing mono")
                    try downlink.place(nil)
                } else {
                    try downlink.place(positions)
                }
            } catch {
                logger.warning("no spatial sound: \(error)")
            }
        case .tap(let tap, let point):
            if case .speaker(let ssrc) = point { downlink.speakerTaps[ssrc] = tap } else { pipeline.taps[point] = tap }
        }
    }

    /// Where datagrams go (nil until configured).
    public var server: UDPAddress? { config?.server }

    /// Whether the server answered the binding.
    public var isBound: Bool { bound }

    /// What the core counted since it started.
    public var statistics: MediaStatistics {
        var statistics = uplink.counted
        statistics.rebinds = counted.rebinds
        statistics.roundTrip = counted.roundTrip
        statistics.nacksSent = counted.nacksSent
        statistics.datagramsSent = counted.datagramsSent
        statistics.bytesSent = counted.bytesSent
        downlink.count(into: &statistics)
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
        downlink.reset()
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
    /// (in `channels`; nil when none was read) through the pipeline and out, repairs to ask for,
    /// and the sound to play.
    public func tick(now: Double, microphone: [Int16]?, channels: Int = 1) -> Tick {
        var tick = Tick()
        let voice = pipeline.send(microphone, channels: channels)
        tick.datagrams = collect {
            ticks += 1
            tick.rebind = keepBinding(at: now)
            if ticks % 50 == 25 { sendReceiverReport(at: now) }
            sendProbe(at: now)
            for packet in uplink.frame(voice, path: config, at: now) { send(packet) }
            sendNacks(at: now)
        }
        let heard = downlink.play(at: now)
        tick.playout = Channels.convert(pipeline.play(heard.frame, channels: heard.channels), from: heard.channels, to: playbackChannels)
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
        if probeDue && bound && uplink.publishing {
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
                    downlink.senderReport(ntp: ntp, at: now)
                }
                for block in blocks where block.ssrc == config.ssrc {
                    uplink.reported(loss: Double(block.fractionLost) / 256, roundTrip: counted.roundTrip, at: now)
                }
            case .estimatedBitrate(_, let bitrate, let ssrcs) where ssrcs.contains(config.ssrc):
                uplink.carries(Int(min(bitrate, 100_000_000)))
            case .nack(_, let media, let lost) where media == config.ssrc:
                for packet in uplink.nacked(lost, roundTrip: counted.roundTrip, levelExtension: config.levelExtension, at: now) { send(packet) }
            default:
                break
            }
        }
    }

    private func media(_ packet: [UInt8], at now: Double) {
        guard let config, let plain = try? config.inbound.unprotect(srtp: packet), let rtp = try? RTPPacket(parsing: plain) else { return }
        lastHeard = now
        // On a path known to lose packets, a new speaker's playout starts with room for a
        // repair instead of learning it mid-sentence; so it does in a call's first 30 seconds,
        // before anything is known of the path, unless the server is a few milliseconds away (a
        // LAN, this machine), where a repair takes no time worth leaving room for: there
        // playout starts at the jitter's depth, not 250 ms deeper for two seconds and 100 ms for
        // fifteen (a clean call's first sentences played that late, then were drawn in
        // mid-speech: PESQ 3.40 where plain Opus has 3.75).
        let roundTrip = counted.roundTrip
        let lossy = pathLossSeen.map { now - $0 < 30_000 } ?? false
        let fresh = now - configuredAt < 30_000 && (roundTrip ?? 0) >= RemoteSpeaker.nearbyRoundTrip
        downlink.receive(rtp, path: config, roundTrip: roundTrip, lossyPathRoundTrip: lossy || fresh ? roundTrip : nil, at: now)
    }

    // MARK: Sending

    /// Tells the server how much of each speaker arrived in the last second (RTCP RR).
    private func sendReceiverReport(at now: Double) {
        guard let config else { return }
        let report = RTCPPacket.serializeCompound([downlink.receiverReport(ssrc: config.ssrc, at: now)])
        if let secured = try? config.outbound.protect(rtcp: report) { send(secured) }
    }

    /// Asks the server again for what each speaker's stream is missing.
    private func sendNacks(at now: Double) {
        guard let config else { return }
        let packets = downlink.nacks(ssrc: config.ssrc, at: now)
        guard !packets.isEmpty else { return }
        counted.nacksSent += packets.count
        if let secured = try? config.outbound.protect(rtcp: RTCPPacket.serializeCompound(packets)) { send(secured) }
    }
}
#endif
