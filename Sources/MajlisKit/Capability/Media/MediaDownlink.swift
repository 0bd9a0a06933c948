#if canImport(MajlisAudio)
import MajlisAudio
import MajlisProtocol
import MajlisTransport

/// What a client hears (half of `MediaClientCore`, no I/O): each speaker through an adaptive
/// jitter buffer and decoder, the repairs asked for, the receiver reports that tell the server
/// what arrived, and every tick's 20 ms mixed, or placed around the listener (spatial sound),
/// with each speaker's tap.
struct MediaDownlink {
    private var speakers: [UInt32: RemoteSpeaker] = [:]
    private var mixer = Mixer()
    var playbackVolume = 100
    var mutedRemotes: Set<UInt32> = []
    /// Each remote speaker's own playout volume, 0...400 (absent: 100).
    var remoteVolumes: [UInt32: Int] = [:]
    /// The app's taps on single speakers, before they are mixed.
    var speakerTaps: [UInt32: any AudioTap] = [:]
    /// The spatial renderer (made when first asked for; nil while off), and its HRTF, kept.
    private var spatializer: Spatializer?
    private var hrtf: HRTF?
    /// The server's last sender report: its NTP middle 32 bits and when it arrived.
    private var serverReport: (ntp: UInt32, arrival: Double)?

    /// A new path: the speakers start again.
    mutating func reset() {
        speakers = [:]
    }

    var isSpatial: Bool { spatializer != nil }

    /// Places each speaker (nil: spatial sound off); throws when the HRTF cannot be read.
    mutating func place(_ positions: [UInt32: SpatialPosition]?) throws(AudioError) {
        guard let positions else {
            spatializer = nil
            return
        }
        if hrtf == nil { hrtf = try HRTF() }
        if spatializer == nil, let hrtf { spatializer = Spatializer(hrtf: hrtf) }
        spatializer?.positions = positions
    }

    /// One media packet from the server, from speaker `rtp.ssrc`. A new speaker's playout
    /// starts with room for a repair where `lossyPathRoundTrip` is given.
    mutating func receive(_ rtp: RTPPacket, path: MediaClientCore.Config, roundTrip: Double?, lossyPathRoundTrip: Double?, at now: Double) {
        let speaker: RemoteSpeaker
        if let existing = speakers[rtp.ssrc] {
            speaker = existing
        } else {
            guard let made = try? RemoteSpeaker(ssrc: rtp.ssrc, now: now, lossyPathRoundTrip: lossyPathRoundTrip) else { return }
            speaker = made
            speakers[rtp.ssrc] = made
        }
        speaker.pathRoundTrip = roundTrip
        speaker.receive(rtp, opusPayloadType: path.payloadType, redPayloadType: path.redPayloadType, levelExtension: path.levelExtension, now: now)
    }

    mutating func senderReport(ntp: UInt64, at now: Double) {
        serverReport = (UInt32(truncatingIfNeeded: ntp >> 16), now)
    }

    /// How much of each speaker arrived in the last second (RTCP RR), with a block for the
    /// server's own reports so it can measure the round trip.
    func receiverReport(ssrc: UInt32, at now: Double) -> RTCPPacket {
        var blocks: [RTCPReportBlock] = []
        for (speakerSSRC, speaker) in speakers {
            let jitter = UInt32(speaker.reception.jitter * Double(AudioFormat.sampleRate) / 1000)
            guard let interval = speaker.reception.takeInterval() else { continue }
            speaker.recentLoss = interval.loss
            blocks.append(RTCPReportBlock(
                ssrc: speakerSSRC, fractionLost: UInt8(min(255, interval.loss * 256)), cumulativeLost: Int32(interval.lost),
                highestSequence: UInt32(interval.highest), jitter: jitter))
        }
        if let report = serverReport {
            blocks.append(RTCPReportBlock(
                ssrc: MediaSettings.serverSSRC, fractionLost: 0, cumulativeLost: 0, highestSequence: 0, jitter: 0,
                lastSenderReport: report.ntp, delaySinceLastSenderReport: UInt32((now - report.arrival) * 65.536)))
        }
        return .receiverReport(ssrc: ssrc, reports: Array(blocks.prefix(31)))
    }

    /// What each speaker's stream is missing and should be asked for again now.
    func nacks(ssrc: UInt32, at now: Double) -> [RTCPPacket] {
        speakers.compactMap { speakerSSRC, speaker in
            let due = speaker.dueNacks(at: now)
            return due.isEmpty ? nil : RTCPPacket.nack(ssrc: ssrc, mediaSSRC: speakerSSRC, lost: due)
        }
    }

    /// The next 20 ms of everything heard: each speaker's tap sees their voice, then they are
    /// mixed (in stereo when one sends stereo) or, with spatial sound, placed (always stereo).
    mutating func play(at now: Double) -> (frame: [Int16], channels: Int) {
        // A speaker's buffer outlives pauses, so what it learned of the path is ready when
        // they speak again.
        speakers = speakers.filter { now - $0.value.lastHeard < 120_000 }
        var frames: [(pcm: [Int16], channels: Int)] = []
        var apart: [(id: UInt32, frame: [Int16])] = []
        for speaker in speakers.values.sorted(by: { $0.ssrc < $1.ssrc }) {
            let pcm = speaker.play(at: now)
            if mutedRemotes.contains(speaker.ssrc) { continue }  // still drained, so unmuting resumes in step
            guard let pcm else { continue }
            let frame = remoteVolumes[speaker.ssrc].map { Gain.apply($0, to: pcm) } ?? pcm
            frames.append((frame, speaker.channels))
            guard spatializer != nil || speakerTaps[speaker.ssrc] != nil else { continue }
            let mono = speaker.channels == 2 ? Channels.downmix(frame) : frame
            if let tap = speakerTaps[speaker.ssrc] {
                var copy = Gain.apply(playbackVolume, to: mono)
                tap.process(&copy, channels: 1)
            }
            if spatializer != nil { apart.append((speaker.ssrc, Gain.apply(playbackVolume, to: mono))) }
        }
        if let spatializer { return (spatializer.render(apart), 2) }
        guard !frames.isEmpty else { return ([Int16](repeating: 0, count: AudioFormat.frameSamples), 1) }
        let channels = frames.contains { $0.channels == 2 } ? 2 : 1
        let mixed = mixer.mix(frames.map { Channels.convert($0.pcm, from: $0.channels, to: channels) })
        return (Gain.apply(playbackVolume, to: mixed), channels)
    }

    /// Adds what the speakers' buffers counted to `statistics`.
    func count(into statistics: inout MediaStatistics) {
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
    }
}
#endif
