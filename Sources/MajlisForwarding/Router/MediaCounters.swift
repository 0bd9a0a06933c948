import MajlisTransport
/// What the media router counted since the start.
public struct MediaCounters: Sendable, Equatable {
    public var forwarded = 0
    public var droppedNotAllowed = 0
    public var droppedUnbound = 0
    public var droppedBadPacket = 0
    public var bindings = 0
    /// Packets sent again on a listener's NACK, and NACKs sent to speakers.
    public var retransmitted = 0
    public var nacksSent = 0
    /// Copies of packets of several frames not sent to members that did not say they play them.
    public var droppedUnsupported = 0
    /// Packets of a speaker past its forwarding budget (`ForwardingBudget`), not sent on.
    public var droppedOverBudget = 0
    /// Frames a speaker's uplink lost that the router rebuilt from later packets' redundant
    /// copies and sent on as packets of their own.
    public var recoveredFromRedundancy = 0
    /// Uplink estimates (REMB) sent to speakers.
    public var estimatesSent = 0
    /// Retransmissions refused because the listener's budget was spent.
    public var repairsRefused = 0
    /// Bindings from an unproven address: answered with a challenge, or (over budget) dropped.
    public var challenges = 0
    /// Browsers whose DTLS handshake failed (a bad fingerprint, garbage, no SRTP profile).
    public var dtlsFailures = 0

    public init() {}
}
