/// A browser's uplink in its member's numbering. A browser numbers each RTCPeerConnection's audio
/// afresh (an SSRC, sequence numbers and timestamps of its own, random at the start), and a page
/// that reconnects opens a new connection while the room goes on forwarding the member under its
/// one SSRC. Everything downstream takes that as one stream: the uplink's loss counting, the
/// packet cache listeners' NACKs are answered from, the tracks of WebRTC listeners. There a jump
/// back of the sequence number reads as packets long gone, and the new connection's voice was
/// dropped until its numbers passed the old ones (in half of all reconnects, for up to the whole
/// 16-bit cycle). So a new browser stream continues the numbering where the last one ended: its
/// sequence numbers from the next one, its timestamps advanced by the time between the two.
struct UplinkNumbering {
    /// The browser's SSRC of the stream being numbered now.
    private var source: UInt32?
    private var sequenceOffset: UInt16 = 0
    private var timestampOffset: UInt32 = 0
    /// The newest packet so far, in the member's numbering, and when it came (ms).
    private var newest: (sequence: UInt16, timestamp: UInt32, at: Double)?

    /// The member's sequence number and timestamp for a packet the browser sent as `ssrc`,
    /// `sequence`, `timestamp`, arriving at `now` (ms). The first stream keeps its numbers.
    mutating func map(ssrc: UInt32, sequence: UInt16, timestamp: UInt32, now: Double) -> (sequence: UInt16, timestamp: UInt32) {
        if ssrc != source {
            source = ssrc
            if let newest {
                // At least one 20 ms frame after the last, at 48 kHz; at most an hour's worth.
                let elapsed = UInt32(min(max(now - newest.at, 20), 3_600_000) * 48)
                sequenceOffset = newest.sequence &+ 1 &- sequence
                timestampOffset = newest.timestamp &+ elapsed &- timestamp
            }
        }
        let mapped = (sequence: sequence &+ sequenceOffset, timestamp: timestamp &+ timestampOffset)
        if let newest, Int16(bitPattern: mapped.sequence &- newest.sequence) <= 0 { return mapped }
        newest = (mapped.sequence, mapped.timestamp, now)
        return mapped
    }

    /// A sequence number of the member's numbering as the browser numbered it (for the
    /// receiver reports it is sent, which speak of its own stream).
    func browsers(_ sequence: UInt16) -> UInt16 { sequence &- sequenceOffset }
}
