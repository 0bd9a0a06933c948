#if canImport(MajlisAudio)
import MajlisAudio
import MajlisProtocol
import MajlisTransport

/// What a client sends (half of `MediaClientCore`, no I/O): the microphone's frames as Opus in
/// SRTP, protected as the server's reports say they must be (`ProtectionPolicy`: FEC, RED,
/// bitrate, frames per packet under what the uplink carries), silence left out (DTX), and the
/// NACKs the server sends answered from a cache of what went.
struct MediaUplink {
    /// Whether the microphone is sent (the host reads a frame for each tick while it is).
    var publishing = false
    var captureVolume = 100
    private(set) var policy: ProtectionPolicy
    private var applied: ProtectionPolicy
    private let encoder: OpusEncoder
    private let profile: AudioProfile
    private var sequence: UInt16
    private var timestamp: UInt32
    private var sentCache = PacketCache()
    /// Which NACKs are answered (not twice a round trip, within what a thin uplink spares).
    private var resends = ResendGate()
    /// When the last 64 packets were sent: how many a report (on about the last second) covers.
    private var sentTimes: [Double] = []
    /// The last frames sent, by sequence number, for redundant copies.
    private var history: [UInt16: (timestamp: UInt32, payload: [UInt8], voiced: Bool)] = [:]
    /// Frames in a row without voice (or that DTX made near-empty), and how many of them are
    /// still sent.
    private var silentRun = 0
    private static let silenceHangover = 100
    /// Frames encoded but not yet sent (frames travel several to a packet on a thin link).
    private var pending: [(timestamp: UInt32, payload: [UInt8], level: UInt8)] = []
    private let logger: Logger
    /// What it counted (sent, retransmitted, silent frames, the protection in use).
    private(set) var counted = MediaStatistics()

    init(bitrate: Int, profile: AudioProfile, sequence: UInt16, timestamp: UInt32, logger: Logger) throws(AudioError) {
        self.profile = profile
        encoder = try OpusEncoder(bitrate: bitrate, music: profile.isMusic, channels: profile.channels)
        // Music is not cut in its quiet passages.
        try encoder.setDTX(profile == .speech)
        policy = ProtectionPolicy(bitrate: bitrate)
        applied = policy
        self.sequence = sequence
        self.timestamp = timestamp
        self.logger = logger
        counted.redundancy = policy.redundancy
        counted.bitrate = bitrate
    }

    /// A receiver report's loss on what this client sends, over the packets sent in the second
    /// and a half before it came.
    mutating func reported(loss: Double, roundTrip: Double?, at now: Double) {
        let packets = sentTimes.count { now - $0 < 1_500 }
        policy.update(loss: loss, roundTrip: roundTrip, packets: packets)
    }

    /// What the server says the uplink carries (bits per second with headers).
    mutating func carries(_ capacity: Int) {
        policy.update(capacity: capacity)
        counted.uplinkCapacity = capacity
    }

    /// The packets the server asked for again that may go again now.
    mutating func nacked(_ lost: [UInt16], roundTrip: Double?, levelExtension: UInt8, at now: Double) -> [[UInt8]] {
        var again: [[UInt8]] = []
        for sequence in lost {
            guard let bytes = sentCache.packet(sequence),
                resends.allows(bytes, sequence: sequence, policy: policy, roundTrip: roundTrip, levelExtension: levelExtension, at: now)
            else { continue }
            counted.retransmitted += 1
            again.append(bytes)
        }
        return again
    }

    /// One tick's frame of `microphone` (nil: nothing heard now, or not configured): the packets
    /// to send, when a packet is complete.
    mutating func frame(_ microphone: [Int16]?, path: MediaClientCore.Config?, at now: Double) -> [[UInt8]] {
        timestamp &+= UInt32(AudioFormat.frameSamples)
        guard publishing, let path, let microphone else {
            history = [:]
            pending = []
            return []
        }
        let frame = Gain.apply(captureVolume, to: microphone)
        applyProtection()
        guard let payload = try? encoder.encode(frame) else { return [] }
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
        guard pending.count >= policy.framesPerPacket || (silent && !pending.isEmpty) else { return [] }
        let frames = pending
        pending = []
        if frames.count > 1 {
            history = [:]  // redundant copies are of one-frame packets only
            var packets: [[UInt8]] = []
            var index = 0
            for joined in OpusFrames.joinRuns(frames.map(\.payload)) {
                let count = OpusFrames.count(joined) ?? 1
                let run = frames[index..<min(frames.count, index + count)]
                index += count
                packets += packet(
                    joined, timestamp: run.first?.timestamp ?? timestamp, level: run.map(\.level).min() ?? 127, payloadType: path.payloadType, path: path, at: now)
            }
            return packets
        }
        let (frameTimestamp, primary, level) = frames[0]
        let next = sequence &+ 1
        var body = primary
        var payloadType = path.payloadType
        if let red = path.redPayloadType, policy.redundancy > 0 {
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
                return REDPayload.Block(payloadType: path.payloadType, timestampOffset: UInt16(distance * AudioFormat.frameSamples), data: earlier.payload)
            }
            if !blocks.isEmpty {
                body = REDPayload(redundant: blocks, primaryPayloadType: path.payloadType, primary: primary).serialized()
                payloadType = red
            }
        }
        history[next] = (frameTimestamp, primary, level < 60)
        history[next &- 8] = nil
        return packet(body, timestamp: frameTimestamp, level: level, payloadType: payloadType, path: path, at: now)
    }

    /// One RTP packet with the next sequence number, secured (none when SRTP refuses it).
    private mutating func packet(_ payload: [UInt8], timestamp: UInt32, level: UInt8, payloadType: UInt8, path: MediaClientCore.Config, at now: Double) -> [[UInt8]] {
        sequence &+= 1
        let packet = RTPPacket(
            payloadType: payloadType, sequenceNumber: sequence, timestamp: timestamp, ssrc: path.ssrc,
            extensions: [RTPPacket.audioLevelExtension(id: path.levelExtension, voice: level < 60, level: level)], payload: payload)
        guard let secured = try? path.outbound.protect(rtp: packet.serialized()) else { return [] }
        sentCache.store(sequence, secured)
        counted.sent += 1
        sentTimes.append(now)
        if sentTimes.count > 64 { sentTimes.removeFirst(sentTimes.count - 64) }
        return [secured]
    }

    /// Brings the encoder in line with the policy.
    private mutating func applyProtection() {
        guard policy.fec != applied.fec || policy.fecLossPercent != applied.fecLossPercent || policy.bitrate != applied.bitrate
            || policy.redundancy != applied.redundancy || policy.framesPerPacket != applied.framesPerPacket || policy.squeezed != applied.squeezed
        else { return }
        try? encoder.setFEC(policy.fec, expectedLossPercent: policy.fecLossPercent)
        try? encoder.setConstrainedVBR(policy.squeezed)
        try? encoder.setBitrate(policy.bitrate)
        if policy.redundancy != applied.redundancy || policy.fec != applied.fec || policy.framesPerPacket != applied.framesPerPacket {
            logger.info(
                "protection: FEC \(policy.fec ? "on" : "off"), \(policy.redundancy) redundant frames, \(policy.bitrate / 1000) kb/s, \(policy.framesPerPacket * AudioFormat.frameMilliseconds) ms packets"
            )
        }
        applied = policy
        counted.fec = policy.fec
        counted.redundancy = policy.redundancy
        counted.bitrate = policy.bitrate
        counted.framesPerPacket = policy.framesPerPacket
    }
}
#endif
