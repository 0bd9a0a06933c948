import MajlisProtocol

/// What a signaling client reports, in order.
public enum SignalingEvent: Sendable, Equatable {
    /// The first `hello` succeeded.
    case connected(SessionInfo)
    /// The connection dropped; the client is trying again.
    case connectionLost(reason: String)
    /// Back after a drop (`SessionInfo.resumed` says whether the rooms were kept).
    case reconnected(SessionInfo)
    /// Closed for good: by `disconnect`, or by the server (4001 token, 4003 kicked, 4004 replaced).
    case closed(code: UInt16?, reason: String)
    /// An event from the server.
    case event(EventFrame)
}
