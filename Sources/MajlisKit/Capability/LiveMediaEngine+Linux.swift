#if os(Linux)
import Foundation
import MajlisAudio
import MajlisProtocol
import MajlisTransport

/// The media capability over the Majlis media plane (docs/protocol.md section 12): binds its UDP
/// address with STUN, sends the microphone as Opus in SRTP every 20 ms while it may publish, and
/// plays what it hears (a jitter buffer and Opus decoder per speaker, mixed) into a sink.
///
/// Threads: one paced 20 ms clock thread (send, play), one receive thread; state behind `state`.
public final class LiveMediaEngine: MediaEngine, @unchecked Sendable {
    // Audited: mutable fields live in `state` (locked); `source`, `encoder` and the per-speaker
    // decoders are used on the clock thread only.
    private struct Config {
        var server: UDPAddress
        var ssrc: UInt32
        var key: [UInt8]
        var outbound: SRTPSession
        var inbound: SRTPSession
        var payloadType: UInt8
        var levelExtension: UInt8
    }

    private final class Speaker {
        var buffer = JitterBuffer(targetFrames: 3)
        let decoder: OpusDecoder
        var lastHeard: Int64
        /// Reception in the current report interval.
        var firstSequence: UInt16?
        var highestSequence: UInt16?
        var received = 0
        init(decoder: OpusDecoder, now: Int64) {
            self.decoder = decoder
            self.lastHeard = now
        }
    }

    private struct State {
        var config: Config?
        var publishing = false
        var running = false
        var bound = false
        var speakers: [UInt32: Speaker] = [:]
        var sequence: UInt16 = UInt16.random(in: 0...UInt16.max)
        var timestamp: UInt32 = UInt32.random(in: 0...UInt32.max)
        var levels: [UInt32: Int] = [:]
        var captureVolume = 100
        var playbackVolume = 100
        var mutedRemotes: Set<UInt32> = []
    }

    private let source: any AudioSource
    private let sink: any AudioSink
    private let socket: UDPSocket
    private let encoder: OpusEncoder
    private let lock = NSLock()
    private var current = State()
    private var mixer = Mixer()
    private let logger: KitLogger

    /// An engine reading `source` and playing into `sink`.
    public init(source: any AudioSource, sink: any AudioSink, bitrate: Int = 32_000, logger: KitLogger = .silent) throws(MajlisError) {
        self.source = source
        self.sink = sink
        self.logger = logger
        do {
            socket = try UDPSocket(host: "0.0.0.0", port: 0, receiveTimeoutMilliseconds: 100)
            encoder = try OpusEncoder(bitrate: bitrate)
        } catch {
            throw MajlisError.misuse("cannot start media: \(error)")
        }
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&current)
    }

    /// Whether the server answered the binding.
    public var isBound: Bool { withState { $0.bound } }

    // MARK: MediaEngine

    public func configure(_ media: JSONValue?) async {
        guard let settings = MediaSettings(media),
            let outbound = try? SRTPSession(key: settings.key, direction: .outbound),
            let inbound = try? SRTPSession(key: settings.key, direction: .inbound)
        else {
            logger.warning("the room gave no usable media settings")
            return
        }
        let config = Config(
            server: settings.server, ssrc: settings.ssrc, key: settings.key, outbound: outbound, inbound: inbound,
            payloadType: settings.payloadType, levelExtension: settings.audioLevelExtension)
        let start = withState { state -> Bool in
            state.config = config
            state.bound = false
            state.speakers = [:]
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

    // MARK: Threads

    private func sendBinding() {
        guard let config = withState({ $0.config }) else { return }
        let request = STUNMessage(
            type: .bindingRequest, transactionId: (0..<12).map { _ in UInt8.random(in: 0...255) },
            attributes: [.init(type: STUNMessage.AttributeType.username.rawValue, value: Array(String(config.ssrc).utf8))])
        socket.send(STUNIntegrity.sign(request, key: config.key), to: config.server)
    }

    private static func monotonicMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    private func receiveLoop() {
        var buffer = [UInt8](repeating: 0, count: 2048)
        while withState({ $0.running }) {
            guard let (length, _) = socket.receive(into: &buffer) else { continue }
            let packet = Array(buffer.prefix(length))
            if STUNMessage.looksLikeSTUN(packet) {
                let key = withState { $0.config?.key } ?? []
                if STUNIntegrity.verify(packet, key: key) { withState { $0.bound = true } }
                continue
            }
            guard let inbound = withState({ $0.config?.inbound }), let plain = try? inbound.unprotect(srtp: packet),
                let rtp = try? RTPPacket(parsing: plain)
            else { continue }
            let now = Self.monotonicMilliseconds()
            withState { state in
                let speaker: Speaker
                if let existing = state.speakers[rtp.ssrc] {
                    speaker = existing
                } else {
                    guard let decoder = try? OpusDecoder() else { return }
                    speaker = Speaker(decoder: decoder, now: now)
                    state.speakers[rtp.ssrc] = speaker
                }
                speaker.buffer.insert(sequence: rtp.sequenceNumber, payload: rtp.payload)
                speaker.lastHeard = now
                speaker.received += 1
                if speaker.firstSequence == nil { speaker.firstSequence = rtp.sequenceNumber }
                if speaker.highestSequence.map({ Int16(bitPattern: rtp.sequenceNumber &- $0) > 0 }) ?? true {
                    speaker.highestSequence = rtp.sequenceNumber
                }
                if let level = rtp.audioLevel(extensionId: state.config?.levelExtension ?? 1) {
                    state.levels[rtp.ssrc] = Int((Double(127 - Int(level.level)) / 127 * 100).rounded())
                }
            }
        }
    }

    private func clockLoop() {
        var next = Self.monotonicMilliseconds()
        var tick = 0
        while withState({ $0.running }) {
            next += Int64(AudioFormat.frameMilliseconds)
            let wait = next - Self.monotonicMilliseconds()
            if wait > 0 { usleep(UInt32(wait) * 1000) }
            tick += 1
            if tick % 250 == 0 { sendBinding() }  // every 5 s: keeps the binding (and NAT) alive
            if tick % 50 == 0 { sendReceiverReport() }  // every second
            sendFrame()
            playFrame()
        }
    }

    /// Tells the server how much of each speaker arrived in the last second (RTCP RR).
    private func sendReceiverReport() {
        let (config, blocks) = withState { state -> (Config?, [RTCPReportBlock]) in
            var blocks: [RTCPReportBlock] = []
            for (ssrc, speaker) in state.speakers {
                guard let first = speaker.firstSequence, let highest = speaker.highestSequence else { continue }
                let expected = Int(highest &- first) + 1
                let lost = max(0, expected - speaker.received)
                blocks.append(RTCPReportBlock(
                    ssrc: ssrc, fractionLost: UInt8(min(255, lost * 256 / max(1, expected))), cumulativeLost: Int32(lost),
                    highestSequence: UInt32(highest), jitter: 0))
                speaker.firstSequence = nil
                speaker.highestSequence = nil
                speaker.received = 0
            }
            return (state.config, blocks)
        }
        guard let config else { return }
        let report = RTCPPacket.serializeCompound([.receiverReport(ssrc: config.ssrc, reports: Array(blocks.prefix(31)))])
        if let secured = try? config.outbound.protect(rtcp: report) { socket.send(secured, to: config.server) }
    }

    private func sendFrame() {
        let (config, publishing, sequence, timestamp, volume) = withState { state -> (Config?, Bool, UInt16, UInt32, Int) in
            state.timestamp &+= UInt32(AudioFormat.frameSamples)
            if state.publishing { state.sequence &+= 1 }
            return (state.config, state.publishing, state.sequence, state.timestamp, state.captureVolume)
        }
        let frame = Gain.apply(volume, to: source.nextFrame())
        guard publishing, let config, let payload = try? encoder.encode(frame) else { return }
        let level = LevelMeter.audioLevel(frame)
        let packet = RTPPacket(
            payloadType: config.payloadType, sequenceNumber: sequence, timestamp: timestamp, ssrc: config.ssrc,
            extensions: [RTPPacket.audioLevelExtension(id: config.levelExtension, voice: level < 60, level: level)], payload: payload)
        if let secured = try? config.outbound.protect(rtp: packet.serialized()) { socket.send(secured, to: config.server) }
    }

    private func playFrame() {
        let now = Self.monotonicMilliseconds()
        let (speakers, muted, volume) = withState { state -> ([UInt32: Speaker], Set<UInt32>, Int) in
            state.speakers = state.speakers.filter { now - $0.value.lastHeard < 2_000 }
            return (state.speakers, state.mutedRemotes, state.playbackVolume)
        }
        var frames: [[Int16]] = []
        for (ssrc, speaker) in speakers {
            let slot = withState { _ in speaker.buffer.pop() }
            if muted.contains(ssrc) { continue }  // still drained, so unmuting resumes in step
            switch slot {
            case .waiting: continue
            case .packet(let payload): if let pcm = try? speaker.decoder.decode(payload) { frames.append(pcm) }
            case .recover(let next): if let pcm = try? speaker.decoder.recover(from: next) { frames.append(pcm) }
            case .conceal: if let pcm = try? speaker.decoder.conceal() { frames.append(pcm) }
            }
        }
        sink.play(frames.isEmpty ? [Int16](repeating: 0, count: AudioFormat.frameSamples) : Gain.apply(volume, to: mixer.mix(frames)))
    }
}
#endif
