import MajlisTransport
/// What a room tells the media router: who is in it, with which SSRC and key, and who may be
/// heard. Applied in the order they were given, before any packet that arrives after them.
public enum RouterCommand: Sendable, Equatable {
    /// `user` is in `room` with this SSRC and SRTP key (a rejoin replaces the old ones).
    case join(room: String, user: String, ssrc: UInt32, key: [UInt8])
    case leave(room: String, user: String)
    /// Exactly these members of `room` may be heard now, each from its seat (user → seat index).
    case setSpeakers(room: String, seats: [String: Int])
    /// `user` (joined already) sends and receives over WebRTC, as negotiated; a new peer with the
    /// same ICE ufrag and fingerprint keeps the transport (a renegotiation).
    case webrtc(room: String, user: String, peer: WebRTCPeer)
    /// `user` runs an echo test (its audio comes back `delay` ms later) under the pseudo-room
    /// `MediaRouterCore.precallRoom(test)`; `.leave` with that room ends it.
    case echoTest(test: String, user: String, ssrc: UInt32, key: [UInt8], delay: Double)
    /// `user` runs a network probe: a train up at `up` bits per second, one down at `down`.
    case probe(test: String, user: String, ssrc: UInt32, key: [UInt8], up: Int, down: Int)
}
