/// WebSocket close codes the server uses (PROTOCOL.md section 1).
public enum CloseCode: UInt16, Sendable {
    /// The server is shutting down.
    case goingAway = 1001
    /// A frame was larger than the 64 KiB limit.
    case messageTooBig = 1009
    /// No valid `hello`, or the session's token expired.
    case unauthorized = 4001
    /// Kicked or banned.
    case kicked = 4003
    /// Replaced by a newer connection of the same user.
    case replaced = 4004
    /// Abuse of rate or size limits.
    case policy = 4008
}
