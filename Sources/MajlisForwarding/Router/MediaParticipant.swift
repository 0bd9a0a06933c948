import MajlisProtocol
import MajlisTransport

/// One member's media state in the router. Its SRTP sessions are made on first use (a binding,
/// a packet), so members who never use voice cost a few bytes. Owned by the router's thread.
final class MediaParticipant {
    let room: String
    let user: String
    let ssrc: UInt32
    let key: [UInt8]
    /// Where its media comes from and goes to, once proven by a binding.
    var address: UDPAddress?
    /// Whether it decodes RED (said in its binding); others get the primary frame only.
    var receivesRED = false
    /// Whether it plays Opus packets of several frames (said in its binding; browsers do).
    var receivesMultiframe = false
    /// Uplink: what arrived of what it sent, and what to ask it for again.
    var uplink = ReceptionCounter()
    var uplinkNack: NackTracker = {
        var tracker = NackTracker()
        tracker.echoDelay = 50
        tracker.learnsReordering = true
        return tracker
    }()
    /// How much its uplink carries (told to it when that changes).
    var uplinkEstimate = UplinkEstimator()
    /// Its last packets (plain RTP), for the NACKs of its listeners; made when it first speaks.
    var sent: PacketCache?
    /// What of its stream may still be forwarded (made when it first speaks).
    var forwarding: ForwardingBudget?
    /// The newest packet of its stream so far (not a retransmission): where a gap a RED packet
    /// fills must lie.
    var newest: (sequence: UInt16, timestamp: UInt32)?
    /// The last reporting interval: uplink loss and jitter (nil: it sent nothing), downlink
    /// loss from its receiver report (nil: none came), round trip (ms).
    var upLoss: Double?
    var upHighest: UInt16 = 0
    var upJitter: Double = 0
    var downLoss: Double?
    /// When its last receiver report came (router milliseconds).
    var downLossAt = 0.0
    var roundTrip: Double?
    /// The worst of the intervals since the last quality report (nil: nothing measured).
    var worstUp: (loss: Double, jitter: Double)?
    var worstDown: (loss: Double, jitter: Double)?
    /// Retransmissions this member may still ask for, per speaker's stream (at most the
    /// stream's own packet rate), and binding challenges it may still cause.
    var repairBudget: [UInt32: TokenBucket] = [:]
    var challengeBudget: TokenBucket?
    /// Set when the member is a browser: its ICE, DTLS and SRTP state.
    var webrtc: WebRTCLeg?
    /// A browser's uplink numbered as one stream across its connections (a page that reconnects).
    var uplinkNumbering = UplinkNumbering()
    /// Set when the member runs a pre-call test rather than being in a room.
    var precall: PrecallTest?
    private var inboundSession: SRTPTransform?
    private var outboundSession: SRTPTransform?

    init(room: String, user: String, ssrc: UInt32, key: [UInt8]) {
        self.room = room
        self.user = user
        self.ssrc = ssrc
        self.key = key
    }

    /// The most SSRCs a member's packets are read under (`SRTPTransform`'s bound): a native
    /// member sends under its one SSRC; a browser under its microphone's and its reports', a few
    /// more over renegotiations on one transport.
    static let maxPeerSSRCs = 16

    /// Unprotects what this member sends.
    var inbound: SRTPTransform? {
        if let webrtc { return webrtc.inbound }
        if inboundSession == nil { inboundSession = try? SRTPTransform(key: key, direction: .inbound, maxStreams: Self.maxPeerSSRCs) }
        return inboundSession
    }

    /// Protects what is forwarded to this member.
    var outbound: SRTPTransform? {
        if let webrtc { return webrtc.outbound }
        if outboundSession == nil { outboundSession = try? SRTPTransform(key: key, direction: .outbound) }
        return outboundSession
    }
}
