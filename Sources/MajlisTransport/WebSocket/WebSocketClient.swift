import CLibWebSockets
import CWebSocketsShim
import Foundation

/// Opens client WebSocket connections; one service thread serves them all.
public final class WebSocketClient: Sendable {
    private let loop: ServiceLoop

    /// Creates the client context and its thread.
    public init(maxMessageBytes: Int = 16 << 20) throws {
        majlis_lws_set_logging(-1)  // failures are the delegate's to report
        let loop = ServiceLoop(maxMessageBytes: maxMessageBytes, serverDelegate: nil, httpHandler: nil)
        let user = Unmanaged.passRetained(loop).toOpaque()
        var eventLoop: UnsafeMutableRawPointer?
        guard let context = majlis_lws_create_client(majlisWebSocketCallback, user, 4096, &eventLoop) else {
            Unmanaged<ServiceLoop>.fromOpaque(user).release()
            throw WebSocketServer.StartError(description: "cannot create a WebSocket client context")
        }
        loop.context = context
        loop.eventLoop = eventLoop
        self.loop = loop
        loop.start(name: "majlis-wsclient")
    }

    /// Connects to `url` (`ws://host:port/path` or `wss://...`). The delegate hears of the open,
    /// each message, and the close (or the failure to connect).
    ///
    /// Over `wss` the server's certificate must be vouched for by the system's certificate
    /// authorities and name the host, or be the certificate in the PEM file `trusting` (a
    /// development server's self-signed one, say): otherwise the connection fails.
    public func connect(url: String, delegate: any WebSocketDelegate, trusting certificateFile: String? = nil) throws -> WebSocketConnection {
        try Self.connect(url: url, delegate: delegate, trusting: certificateFile, on: loop)
    }

    /// Opens a client connection to `url` served by `loop` (a client's or a server's).
    static func connect(url: String, delegate: any WebSocketDelegate, trusting certificateFile: String?, on loop: ServiceLoop) throws -> WebSocketConnection {
        guard let components = URLComponents(string: url), let scheme = components.scheme, scheme == "ws" || scheme == "wss",
            let host = components.host
        else { throw WebSocketServer.StartError(description: "not a ws:// or wss:// URL: \(url)") }
        let tls = scheme == "wss"
        let port = components.port ?? (tls ? 443 : 80)
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        var trusted: [UInt8]?
        if let certificateFile {
            var fingerprint = [UInt8](repeating: 0, count: 32)
            guard majlis_tls_certificate_fingerprint(certificateFile, &fingerprint) == 1 else {
                throw WebSocketServer.StartError(description: "no PEM certificate could be read from \(certificateFile)")
            }
            trusted = fingerprint
        }
        let connection = WebSocketConnection(
            id: ServiceLoop.makeConnectionId(), peer: "\(host):\(port)", isClient: true, trustedCertificate: trusted, loop: loop, delegate: delegate)
        loop.connect(connection, host: host, port: port, path: path, tls: tls)
        return connection
    }

    /// The client's service thread's kernel id (0 before it runs), for scheduling it.
    public var serviceThreadId: Int32 { loop.serviceThreadId }

    /// Whether the service thread waits on an epoll loop of its own (see `WebSocketServer`).
    public var waitsOnEpoll: Bool { loop.eventLoop != nil }

    /// Closes every connection and ends the thread.
    public func stop() {
        loop.stop()
    }
}
