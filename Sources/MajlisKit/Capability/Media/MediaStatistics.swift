/// What a client's media plane counted since it started (`MediaClientCore.statistics`, the live
/// engine's and a virtual call's alike).
public struct MediaStatistics: Sendable, Equatable {
    public var sent = 0
    public var retransmitted = 0
    public var nacksSent = 0
    public var recoveredByRedundancy = 0
    public var repairedByRetransmission = 0
    /// Playout slots of everything heard: frames played, recovered from FEC, concealed.
    public var played = 0
    public var recoveredByFEC = 0
    public var concealed = 0
    /// Frames played a pitch period shorter or longer to follow the target delay in speech.
    public var accelerated = 0
    public var stretched = 0
    /// Frames that arrived too late to play.
    public var late = 0
    /// The playout delay the jitter buffers aim for now (the largest), milliseconds.
    public var targetDelay: Double = 0
    public var rebinds = 0
    /// Round trip to the server measured with bindings, milliseconds.
    public var roundTrip: Double?
    /// The protection in use: FEC, earlier frames per packet, bitrate.
    public var fec = false
    public var redundancy = 0
    public var bitrate = 0
    /// 20 ms frames in each packet sent, and what the server last said the uplink carries
    /// (bits per second with headers; nil: no limit).
    public var framesPerPacket = 1
    public var uplinkCapacity: Int?
    /// Frames not sent because they were silence (Opus DTX), and every datagram sent
    /// (media, retransmissions, reports, bindings) with its bytes (without IP and UDP headers).
    public var silentFrames = 0
    public var datagramsSent = 0
    public var bytesSent = 0

    public init() {}
}
