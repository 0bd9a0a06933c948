import Foundation

/// Receives what happens on WebSocket connections. Called on the connection's service thread:
/// return quickly and hand slow work elsewhere.
public protocol WebSocketDelegate: AnyObject, Sendable {
    /// The handshake completed.
    func webSocketDidOpen(_ connection: WebSocketConnection)
    /// One complete text message arrived.
    func webSocket(_ connection: WebSocketConnection, didReceive message: Data)
    /// The connection ended (or never opened). `code` is the peer's close code when it sent one.
    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String)
}
