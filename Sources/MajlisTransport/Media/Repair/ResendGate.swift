import MajlisProtocol

/// Whether a sender answers a NACK for one of its packets. Not twice within a round trip (the
/// first copy may still be on its way). On an uplink the capacity binds (`ProtectionPolicy`
/// squeezed), only within what it has to spare beside the voice, and never for a quiet frame:
/// a lost moment of silence is concealed as silence, and its copy would queue ahead of speech.
/// (On a 40 kb/s link, the probe train's overflow cost a speaker's first silent packets; sent
/// again they delayed what followed by up to 700 ms, and taught listeners to play that late.)
///
/// Pure: time comes in as milliseconds on one monotonic clock.
public struct ResendGate: Sendable {
    private var resentAt: [UInt16: Double] = [:]
    private var budget: TokenBucket?

    public init() {}

    /// Whether to send `packet` (as first sent, SRTP) again now, asked for it by a NACK.
    /// `roundTrip`: the sender's, ms (nil: unknown); `levelExtension`: the audio level
    /// extension's id.
    public mutating func allows(
        _ packet: [UInt8], sequence: UInt16, policy: ProtectionPolicy, roundTrip: Double?, levelExtension: UInt8, at now: Double
    ) -> Bool {
        guard now - (resentAt[sequence] ?? -.infinity) >= max(100, roundTrip ?? 100) else { return false }
        if let capacity = policy.capacity, policy.squeezed {
            let quiet = packet.withUnsafeBytes { RTPPacket.audioLevel(in: $0, extensionId: levelExtension) }.map { !$0.voice } ?? false
            if quiet { return false }
            let voice = ProtectionPolicy.wireRate(bitrate: policy.bitrate, redundancy: 0, frames: policy.framesPerPacket)
            let spare = max(capacity / 10, capacity - voice)
            let perSecond = max(1, spare / ((packet.count + UplinkEstimator.headerBytes) * 8))
            var bucket = budget ?? TokenBucket(capacity: perSecond, now: Int64(now))
            let allowed = bucket.take(capacity: perSecond, perSecond: Double(perSecond), now: Int64(now))
            budget = bucket
            guard allowed else { return false }
        }
        if resentAt.count > 256 { resentAt = resentAt.filter { now - $0.value < 5_000 } }
        resentAt[sequence] = now
        return true
    }
}
