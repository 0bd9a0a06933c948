import CLibWebSockets
import Foundation
import MajlisProtocol
import Synchronization

/// One WebSocket connection, server or client side.
///
/// `send` and `close` may be called from any thread: they queue under `state`'s lock and wake the
/// service thread, which alone touches the socket. Messages go out in the order they were queued.
public final class WebSocketConnection: Sendable {
    /// A queued message, with when the work it answers or announces began (monotonic ns) and
    /// whether it answers a request.
    struct Outgoing {
        var data: Data
        var since: UInt64
        var urgent: Bool
    }

    struct State {
        var outbox: [Outgoing] = []
        var outboxBytes = 0
        var pendingPing = false
        var closeRequest: (code: UInt16, reason: String)?
        var closed = false
        var lastReceived: Int64 = 0
        var userInfo: (any Sendable)?
    }

    /// A process-unique number, for logs and maps.
    public let id: UInt64
    /// The peer's address, when known.
    public let peer: String
    /// Whether this end is the client (whose frames are masked).
    let isClient: Bool
    /// A client's: the SHA-256 fingerprint of a server certificate it trusts besides those the
    /// system's certificate authorities vouch for.
    let trustedCertificate: [UInt8]?
    let state: Mutex<State>
    let loop: ServiceLoop
    /// libwebsockets' handle: the service thread's only (set when the connection is made there,
    /// nil once it closed).
    nonisolated(unsafe) var wsi: OpaquePointer?
    /// Only the service thread touches the receive buffer and whether a binary message is being
    /// thrown away.
    nonisolated(unsafe) var receiveBuffer = Data()
    nonisolated(unsafe) var discardingBinary = false
    /// Set on the service thread when the handshake completed.
    nonisolated(unsafe) var established = false
    /// Set on the service thread when a write failed: the connection is closed at its next callback.
    nonisolated(unsafe) var broken = false
    /// Set on the service thread when a client refused the server's certificate: OpenSSL's words
    /// for why (read it once the connection has closed).
    public internal(set) nonisolated(unsafe) var rejectedCertificate: String?
    /// Service thread: a message over the limit is arriving (and how much of it came); it is
    /// thrown away, and the connection closed with 1009 once it has ended.
    nonisolated(unsafe) var discardingOversize = false
    nonisolated(unsafe) var discardedBytes = 0
    /// When the message being handed to the delegate was received (monotonic ns); read it on the
    /// service thread, inside `webSocket(_:didReceive:)`.
    public internal(set) nonisolated(unsafe) var messageReceivedAt: UInt64 = 0
    let delegateBox: Mutex<(any WebSocketDelegate)?>

    /// The most bytes a connection may have queued before it is closed as too slow (4008).
    public static let maxQueuedBytes = 8 << 20

    init(id: UInt64, peer: String, isClient: Bool, trustedCertificate: [UInt8]? = nil, loop: ServiceLoop, delegate: (any WebSocketDelegate)?) {
        self.id = id
        self.peer = peer
        self.isClient = isClient
        self.trustedCertificate = trustedCertificate
        self.loop = loop
        self.state = Mutex(State(lastReceived: loop.clock.now()))
        self.delegateBox = Mutex(delegate)
    }

    var delegate: (any WebSocketDelegate)? { delegateBox.withLock { $0 } }

    /// Anything the owner wants to keep with the connection (e.g. its session).
    public var userInfo: (any Sendable)? {
        get { state.withLock { $0.userInfo } }
        set { state.withLock { $0.userInfo = newValue } }
    }

    /// Milliseconds (the loop's monotonic clock) when the peer last sent anything, pongs included.
    public var lastReceived: Int64 { state.withLock { $0.lastReceived } }

    /// Whether the connection is closed or closing.
    public var isClosed: Bool { state.withLock { $0.closed || $0.closeRequest != nil } }

    /// Queues one text message. `urgent` messages (answers to requests) are written before
    /// queued broadcasts of other connections; either way one connection's messages keep their order.
    /// `since` is when the work behind it began (the request's arrival, monotonic ns; default now):
    /// the service loop counts the delay from then to the write.
    public func send(_ message: Data, urgent: Bool = true, since: UInt64? = nil) {
        if enqueue(Outgoing(data: message, since: since ?? MonotonicClock.nanoseconds(), urgent: urgent)) { loop.schedule(self, urgent: urgent) }
    }

    /// Adds `queued` to the outbox; whether the service loop should now look at the connection
    /// (false when it is closed or closing, or when the message made it too slow: closed 4008).
    private func enqueue(_ queued: Outgoing) -> Bool {
        let taken: Bool? = state.withLock { state in
            guard !state.closed, state.closeRequest == nil else { return nil }
            state.outbox.append(queued)
            state.outboxBytes += queued.data.count
            return state.outboxBytes <= Self.maxQueuedBytes
        }
        if taken == false { close(code: 4008, reason: "too slow: outgoing queue full") }
        return taken == true
    }

    /// Queues one text message on each of `connections` (a broadcast), as `send` would, but wakes
    /// each service loop once for all of them: the sender takes the loop's lock once, not once per
    /// connection, so a fan-out to thousands does not hold up the answers the loop is writing.
    public static func send(_ message: Data, to connections: [WebSocketConnection], urgent: Bool = true, since: UInt64? = nil) {
        let queued = Outgoing(data: message, since: since ?? MonotonicClock.nanoseconds(), urgent: urgent)
        // Connections are grouped by service loop; a server's all share one, so a run of the
        // same loop as the last is the common case.
        var ready: [(loop: ServiceLoop, connections: [WebSocketConnection])] = []
        for connection in connections where connection.enqueue(queued) {
            if let index = ready.lastIndex(where: { $0.loop === connection.loop }) {
                ready[index].connections.append(connection)
            } else {
                ready.append((connection.loop, [connection]))
            }
        }
        for (loop, connections) in ready { loop.schedule(connections, urgent: urgent) }
    }

    /// Queues a WebSocket ping.
    public func ping() {
        state.withLock { $0.pendingPing = true }
        loop.schedule(self)
    }

    /// Closes after the queued messages are written, with a close code and reason.
    public func close(code: UInt16, reason: String) {
        let first: Bool = state.withLock { state in
            guard !state.closed, state.closeRequest == nil else { return false }
            state.closeRequest = (code, String(reason.prefix(100)))
            return true
        }
        if first { loop.schedule(self) }
    }

    func touch() {
        let now = loop.clock.now()
        state.withLock { $0.lastReceived = now }
    }
}
