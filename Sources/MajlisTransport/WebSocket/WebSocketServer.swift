import CLibWebSockets
import CWebSocketsShim
import Foundation
import MajlisProtocol

/// A WebSocket and HTTP server on libwebsockets, with one service thread.
///
/// WebSocket upgrades are accepted at `/v1/signal` only (none without a delegate: an HTTP-only
/// server); other HTTP requests go to `http`, which
/// answers each exchange at once or later from any thread.
/// Text messages larger than `maxMessageBytes` close the connection with 1009; binary frames
/// are ignored; invalid UTF-8 closes it (1007), as RFC 6455 asks.
public final class WebSocketServer: Sendable {
    /// Why the server could not start.
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    /// What the server lets in.
    public struct Limits: Sendable {
        /// Open connections (HTTP and WebSocket) one IP address may hold; one more is hung up
        /// before any work.
        public var connectionsPerAddress: Int
        /// How long a request's body may take to arrive, in seconds (408 after).
        public var requestSeconds: Int
        /// Decides, from its headers, whether a request's body may be read: nil reads it; an
        /// answer refuses it (the body is read and thrown away, never kept, then answered).
        public var refuseBody: (@Sendable (HTTPRequest) -> HTTPResponse?)?
        /// Where a request's body goes as it arrives (`HTTPBodySink`: an upload), from its
        /// headers; nil for a body read whole (as `refuseBody` decides).
        public var bodySink: (@Sendable (HTTPRequest) -> (any HTTPBodySink)?)?
        /// Decides whether a WebSocket upgrade with these `Origin` and `Host` headers is taken.
        public var acceptUpgrade: (@Sendable (_ origin: String?, _ host: String?) -> Bool)?
        /// Addresses `connectionsPerAddress` does not apply to.
        public var exempt: @Sendable (String) -> Bool

        public init(
            connectionsPerAddress: Int = .max, requestSeconds: Int = 30, refuseBody: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil,
            bodySink: (@Sendable (HTTPRequest) -> (any HTTPBodySink)?)? = nil,
            acceptUpgrade: (@Sendable (_ origin: String?, _ host: String?) -> Bool)? = nil, exempt: @escaping @Sendable (String) -> Bool = { _ in false }
        ) {
            self.exempt = exempt
            self.connectionsPerAddress = connectionsPerAddress
            self.requestSeconds = requestSeconds
            self.refuseBody = refuseBody
            self.bodySink = bodySink
            self.acceptUpgrade = acceptUpgrade
        }
    }

    private let loop: ServiceLoop

    /// The service thread's kernel id (0 before it runs), for scheduling it.
    public var serviceThreadId: Int32 { loop.serviceThreadId }
    /// The port it listens on (the real one when 0 was asked for).
    public let port: Int

    /// Binds and starts serving. `host` "0.0.0.0" listens on every interface. `clock` (monotonic
    /// milliseconds) dates what connections hear (`WebSocketConnection.lastReceived`).
    public init(
        host: String, port: Int, tls: (certificate: String, key: String)? = nil, maxMessageBytes: Int = 65_536,
        delegate: (any WebSocketDelegate)?, clock: any MillisecondClock = MonotonicClock(),
        limits: Limits = Limits(), http: @escaping @Sendable (HTTPExchange) -> Void
    ) throws {
        majlis_lws_set_logging(0)
        let loop = ServiceLoop(
            maxMessageBytes: maxMessageBytes, serverDelegate: delegate, httpHandler: http, clock: clock,
            maxConnectionsPerAddress: limits.connectionsPerAddress, exemptAddress: limits.exempt, requestDeadline: limits.requestSeconds,
            refuseBody: limits.refuseBody, bodySink: limits.bodySink,
            acceptUpgrade: limits.acceptUpgrade)
        let user = Unmanaged.passRetained(loop).toOpaque()
        let iface: String? = (host == "0.0.0.0" || host == "*") ? nil : host
        var eventLoop: UnsafeMutableRawPointer?
        let context = withOptionalCString(iface) { ifacePointer in
            withOptionalCString(tls?.certificate) { cert in
                withOptionalCString(tls?.key) { key in
                    majlis_lws_create_server(ifacePointer, Int32(port), majlisWebSocketCallback, user, cert, key, 4096, &eventLoop)
                }
            }
        }
        guard let context else {
            Unmanaged<ServiceLoop>.fromOpaque(user).release()
            throw StartError(description: "cannot listen on \(host):\(port) (address in use, or bad TLS files)")
        }
        loop.context = context
        loop.eventLoop = eventLoop
        let vhost = lws_get_vhost_by_name(context, "default")
        let bound = vhost.map { Int(lws_get_vhost_listen_port($0)) } ?? port
        self.port = bound
        self.loop = loop
        loop.start(name: "majlis-ws")
    }

    /// Whether the service thread waits on an epoll loop of its own (libev), where waking for one
    /// socket costs the same however many are open; otherwise on libwebsockets' poll(), which
    /// scans every socket at each wake-up.
    public var waitsOnEpoll: Bool { loop.eventLoop != nil }

    /// Opens a client connection to a `ws://` URL on the server's own service thread (what it
    /// reads is handed to `delegate` there, with no thread between it and the server's own
    /// connections). `wss://` is for a `WebSocketClient`.
    public func connect(url: String, delegate: any WebSocketDelegate) throws -> WebSocketConnection {
        guard url.hasPrefix("ws://") else { throw StartError(description: "a server connects only to ws:// URLs itself: \(url)") }
        return try WebSocketClient.connect(url: url, delegate: delegate, trusting: nil, on: loop)
    }

    /// Stops serving: every connection is dropped and the thread ends.
    public func stop() {
        loop.stop()
    }

    /// From when the work behind each written message began (its request's arrival, for
    /// answers and the events a request causes) to its write, since the start.
    public var writeDelays: (answers: DelayHistogram, events: DelayHistogram) { loop.writeDelays.withLock { $0 } }
}

func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
