import MajlisProtocol

/// What one speaker may have forwarded: bytes and packets a second, every packet of its stream
/// counted once (its own, its answers to NACKs, the frames the router rebuilds from its RED
/// copies), whatever the room's size. Sized to the most the apps' profiles send: stereo music
/// at 96 kb/s with three RED copies in each packet is about 400 kb/s of payload and headers,
/// Opus's own ceiling (510 kb/s) about 520 kb/s; the budget is 640 kb/s, after a burst of two
/// seconds of it (a stalled uplink delivers what it held at once). Packets: fifty frames a
/// second, a NACK's answer for each and rebuilt frames, at most 150 a second. A client that
/// sends more, a flood of 1,200-byte packets at 9 Mb/s say, has only this much forwarded; the
/// rest is dropped and counted (`majlis_media_packets_dropped_total{reason="over_budget"}`).
struct ForwardingBudget {
    /// 640 kb/s.
    static let bytesPerSecond = 80_000
    static let packetsPerSecond = 150
    /// Seconds of the rate a speaker may send at once.
    static let burstSeconds = 2

    private var bytes: TokenBucket
    private var packets: TokenBucket

    init(now: Double) {
        bytes = TokenBucket(capacity: Self.bytesPerSecond * Self.burstSeconds, now: Int64(now))
        packets = TokenBucket(capacity: Self.packetsPerSecond * Self.burstSeconds, now: Int64(now))
    }

    /// Charges one packet of `length` bytes (plain RTP); false when the budget is spent.
    mutating func take(_ length: Int, now: Double) -> Bool {
        let milliseconds = Int64(now)
        guard packets.take(capacity: Self.packetsPerSecond * Self.burstSeconds, perSecond: Double(Self.packetsPerSecond), now: milliseconds) else {
            return false
        }
        return bytes.take(length, capacity: Self.bytesPerSecond * Self.burstSeconds, perSecond: Double(Self.bytesPerSecond), now: milliseconds)
    }
}
