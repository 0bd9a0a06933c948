/// Any request a client can make, decoded from its `op` and `args`.
public enum ClientCommand: Sendable, Equatable {
    case hello(HelloArgs)
    case ping
    case renew(token: String)
    case bye
    /// Pre-call tests (section 15): an echo test heard back after `delay` ms, a network probe
    /// with the expected rates up and down (bits per second), what the server measured of it,
    /// and the end of either. An echo test with `sdp` (a WebRTC offer) runs over WebRTC.
    case echoStart(delay: Int, sdp: String? = nil)
    case echoStop
    case probeStart(up: Int, down: Int)
    case probeResult
    case probeStop
    /// An op addressed to the room `room`.
    case room(String, RoomCommand)
    /// A messaging op (conversations outside rooms).
    case messaging(MessagingCommand)
}
