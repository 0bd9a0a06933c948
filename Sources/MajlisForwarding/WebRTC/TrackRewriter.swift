import MajlisTransport
/// One receive track of a browser (a seat), carrying whoever speaks from that seat: the
/// speaker's packets get the track's SSRC, and sequence numbers and timestamps that continue
/// where the previous speaker's stopped, so the browser's decoder sees one unbroken stream
/// (as Jitsi's SSRC rewriting does).
public struct TrackRewriter: Sendable, Equatable {
    public let ssrc: UInt32
    private var source: UInt32?
    private var sequenceOffset: UInt16 = 0
    private var timestampOffset: UInt32 = 0
    /// The newest packet sent on the track, and when.
    private var lastSequence: UInt16 = 0
    private var lastTimestamp: UInt32 = 0
    private var lastTime: Double = 0
    private var started = false

    public init(ssrc: UInt32) { self.ssrc = ssrc }

    /// The sequence number and timestamp on the track for a packet of `source` sent at `now`
    /// (milliseconds). A new speaker continues one sequence number and the elapsed time (at
    /// least a frame) after the last packet.
    public mutating func map(source: UInt32, sequence: UInt16, timestamp: UInt32, now: Double) -> (sequence: UInt16, timestamp: UInt32) {
        if source != self.source {
            if started {
                sequenceOffset = lastSequence &+ 1 &- sequence
                let elapsed = UInt32(min(3_600_000, max(20, now - lastTime)) * 48)
                timestampOffset = lastTimestamp &+ elapsed &- timestamp
            }
            self.source = source
        }
        let sequenceOut = sequence &+ sequenceOffset
        let timestampOut = timestamp &+ timestampOffset
        if !started || Int16(bitPattern: sequenceOut &- lastSequence) > 0 {
            lastSequence = sequenceOut
            lastTimestamp = timestampOut
            lastTime = now
        }
        started = true
        return (sequenceOut, timestampOut)
    }
}
