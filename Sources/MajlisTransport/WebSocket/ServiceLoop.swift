import CLibWebSockets
import CWebSocketsShim
import Foundation
import MajlisProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One libwebsockets context and the thread that services it.
///
/// Thread rules: the lws context and every `wsi` are touched only on the service thread. Other
/// threads call `schedule(_:)`, which records the connection under `pending`'s lock and wakes the
/// loop with `lws_cancel_service`; the loop then asks lws for a writable callback.
final class ServiceLoop: @unchecked Sendable {
    // Audited: `context`, `exchanges`, `arriving` and `scratch` are used only on the service thread
    // (and by `start` before the thread exists; checked, in release builds too, by `assertOnServiceThread`);
    // `eventLoop` is set before the thread exists and only read after; `pending`, `clientQueue`
    // and `running` are behind their own locks.
    var context: OpaquePointer?
    /// The context's own event loop (epoll), or nil where it runs on libwebsockets' poll loop.
    /// Set before the thread starts, and not changed after (destroyed with the context).
    nonisolated(unsafe) var eventLoop: UnsafeMutableRawPointer?
    private var thread: Thread?
    /// Connections with something to write: `urgent` (answers to requests) go before `bulk`
    /// (broadcast events), and bulk is written in chunks so the loop keeps reading between them.
    private struct Pending {
        var urgent: [WebSocketConnection] = []
        var bulk: [WebSocketConnection] = []
        var bulkStart = 0
        /// HTTP exchanges answered from other threads, to be written.
        var answered: [HTTPExchange] = []
        var woken = false
    }
    private let pending = Mutex(Pending())
    /// How many bulk connections one pass writes before the loop goes back to reading sockets
    /// (each pass polls every socket, so fewer passes cost less; more reading keeps requests
    /// from waiting behind a broadcast).
    private let bulkChunk = 256
    /// Within a pass, answers queued meanwhile are written after at most this many bulk writes.
    private let urgentCheck = 32
    private let running = Atomic<Bool>(false)
    private let threadId = Atomic<Int32>(0)
    private let finished = DispatchSemaphore(value: 0)
    let maxMessageBytes: Int
    /// The largest message read from a server (on a connection made from here).
    static let serverMessageBytes = 16 << 20
    let serverDelegate: (any WebSocketDelegate)?
    let httpHandler: (@Sendable (HTTPExchange) -> Void)?
    /// HTTP requests being read or waiting for their answer, by connection (service thread only).
    var exchanges: [OpaquePointer: HTTPExchange] = [:]
    /// A request whose body is still arriving.
    struct ArrivingBody {
        /// The request, body so far; nil while a refused body is read and thrown away.
        var request: HTTPRequest?
        /// What a refused body is answered once it has all arrived.
        var refusal: HTTPResponse
        /// When its headers had arrived (monotonic milliseconds).
        var since: Int64
        /// Where the body goes as it arrives, rather than into `request` (`HTTPBodySink`).
        var sink: (any HTTPBodySink)?
    }
    /// Requests whose body is still arriving (service thread only).
    var arriving: [OpaquePointer: ArrivingBody] = [:]
    /// Open connections by peer address (service thread only).
    var limiter: ConnectionLimiter
    /// How long a request may take to arrive, headers and body, in seconds.
    let requestDeadline: Int
    /// Decides, from its headers, whether a request's body may be read: nil reads it, an answer
    /// refuses it (the body is then read and thrown away, never kept, and the answer given).
    let refuseBody: (@Sendable (HTTPRequest) -> HTTPResponse?)?
    /// Where a request's body goes as it arrives (an upload), from its headers; nil: it is read
    /// whole as `refuseBody` decides.
    let bodySink: (@Sendable (HTTPRequest) -> (any HTTPBodySink)?)?
    /// Decides whether a WebSocket upgrade with these headers (`origin`, `host`) is taken.
    let acceptUpgrade: (@Sendable (_ origin: String?, _ host: String?) -> Bool)?
    /// The largest request body read; a larger one is answered 413.
    static let maxRequestBody = 1 << 20
    /// The largest body read and thrown away to answer 413 cleanly; a larger one is cut off.
    static let maxDiscardedBody = 16 << 20
    let pre = majlis_lws_pre()
    /// The buffer frames are copied into before lws_write (service thread only).
    private var scratch: [UInt8] = []
    private struct ClientStart: Sendable {
        var connection: WebSocketConnection
        var host: String
        var port: Int
        var path: String
        var tls: Bool
    }
    private let clientQueue = Mutex<[ClientStart]>([])
    /// From when the work behind a message began to its write: answers, and events.
    let writeDelays = Mutex<(answers: DelayHistogram, events: DelayHistogram)>((DelayHistogram(), DelayHistogram()))
    private static let nextConnectionId = Atomic<UInt64>(1)

    /// Monotonic milliseconds: when each connection last heard its peer.
    let clock: any MillisecondClock

    init(
        maxMessageBytes: Int, serverDelegate: (any WebSocketDelegate)?, httpHandler: (@Sendable (HTTPExchange) -> Void)?,
        clock: any MillisecondClock = MonotonicClock(), maxConnectionsPerAddress: Int = .max,
        exemptAddress: @escaping @Sendable (String) -> Bool = { _ in false }, requestDeadline: Int = 30,
        refuseBody: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil, bodySink: (@Sendable (HTTPRequest) -> (any HTTPBodySink)?)? = nil,
        acceptUpgrade: (@Sendable (_ origin: String?, _ host: String?) -> Bool)? = nil
    ) {
        self.clock = clock
        limiter = ConnectionLimiter(limit: maxConnectionsPerAddress, exempt: exemptAddress)
        self.requestDeadline = requestDeadline
        self.refuseBody = refuseBody
        self.bodySink = bodySink
        self.acceptUpgrade = acceptUpgrade
        self.maxMessageBytes = maxMessageBytes
        self.serverDelegate = serverDelegate
        self.httpHandler = httpHandler
    }

    static func makeConnectionId() -> UInt64 { nextConnectionId.add(1, ordering: .relaxed).oldValue }

    /// Starts the service thread for an already created context.
    func start(name: String) {
        running.store(true, ordering: .sequentiallyConsistent)
        let thread = Thread { [self] in
            ThreadName.set(name)
            threadId.store(majlis_thread_id(), ordering: .relaxed)
            while running.load(ordering: .sequentiallyConsistent) {
                // On an event loop, a broadcast is written a chunk at a time between turns of the
                // loop, which then does not wait: sockets are read between chunks, and
                // libwebsockets' own deferred work (data a TLS session holds) runs whenever no
                // socket is ready. (Waking the loop for each chunk, as on poll(), would keep a
                // socket always ready and starve that work for as long as broadcasts keep coming.)
                let broadcasting = eventLoop != nil && pending.withLock { !$0.bulk.isEmpty }
                if majlis_lws_service(context, eventLoop, broadcasting ? 1 : 0) < 0 { break }
                if eventLoop != nil { write(takeWork(urgent: false)) }
            }
            majlis_lws_destroy(context, eventLoop)
            context = nil
            finished.signal()
        }
        thread.stackSize = 1 << 20
        self.thread = thread
        thread.start()
    }

    /// Checks that the caller runs on the service thread, as everything that touches the lws
    /// context, a `wsi` or the service-thread-only state must: in release builds too (a thread id
    /// remembered per thread and an atomic load), so a use from elsewhere stops where it starts.
    func assertOnServiceThread() {
        precondition(majlis_thread_id() == threadId.load(ordering: .relaxed), "called off the service thread")
    }

    /// The service thread's kernel id (0 before it runs).
    var serviceThreadId: Int32 { threadId.load(ordering: .relaxed) }

    /// Stops the loop, closes every connection and destroys the context; waits for the thread.
    func stop() {
        guard running.exchange(false, ordering: .sequentiallyConsistent) else { return }
        lws_cancel_service(context)
        finished.wait()
    }

    /// Asks the service thread to look at `connection` (output queued, close or ping requested).
    /// `urgent` work (answers) is written before bulk work (broadcasts).
    func schedule(_ connection: WebSocketConnection, urgent: Bool = true) {
        let wake: Bool = pending.withLock { state in
            if urgent { state.urgent.append(connection) } else { state.bulk.append(connection) }
            if state.woken { return false }
            state.woken = true
            return true
        }
        if wake, running.load(ordering: .relaxed) { lws_cancel_service(context) }
    }

    /// Asks the service thread to look at each of `connections`, under one lock.
    func schedule(_ connections: [WebSocketConnection], urgent: Bool) {
        guard !connections.isEmpty else { return }
        let wake: Bool = pending.withLock { state in
            if urgent { state.urgent += connections } else { state.bulk += connections }
            if state.woken { return false }
            state.woken = true
            return true
        }
        if wake, running.load(ordering: .relaxed) { lws_cancel_service(context) }
    }

    /// Asks the service thread to write `exchange`'s answer.
    func schedule(_ exchange: HTTPExchange) {
        let wake: Bool = pending.withLock { state in
            state.answered.append(exchange)
            if state.woken { return false }
            state.woken = true
            return true
        }
        if wake, running.load(ordering: .relaxed) { lws_cancel_service(context) }
    }

    /// Opens a client connection (from any thread).
    func connect(_ connection: WebSocketConnection, host: String, port: Int, path: String, tls: Bool) {
        clientQueue.withLock { $0.append(ClientStart(connection: connection, host: host, port: port, path: path, tls: tls)) }
        schedule(connection)
    }

    // MARK: Service thread

    /// Takes what is to be written now: every answer (`urgent`) and the next chunk of
    /// broadcasts. On poll() (no event loop of its own), a remaining broadcast wakes the loop
    /// again, after it has read its sockets (so requests are not stuck behind a broadcast).
    private func takeWork(urgent: Bool) -> [WebSocketConnection] {
        let (items, more): ([WebSocketConnection], Bool) = pending.withLock { state in
            var items: [WebSocketConnection] = []
            if urgent {
                items = state.urgent
                state.urgent.removeAll(keepingCapacity: true)
            }
            let end = min(state.bulk.count, state.bulkStart + bulkChunk)
            items += state.bulk[state.bulkStart..<end]
            state.bulkStart = end
            if state.bulkStart == state.bulk.count {
                state.bulk.removeAll(keepingCapacity: true)
                state.bulkStart = 0
            }
            let more = !state.bulk.isEmpty && eventLoop == nil
            if urgent { state.woken = more }
            return (items, more)
        }
        if more { lws_cancel_service(context) }
        return items
    }

    func drainPending() {
        assertOnServiceThread()
        let answered: [HTTPExchange] = pending.withLock { state in
            defer { state.answered.removeAll(keepingCapacity: true) }
            return state.answered
        }
        // Answers, and on poll() a chunk of broadcasts; on an event loop the service thread
        // writes broadcasts between turns of the loop.
        let items = takeWork(urgent: true)
        for exchange in answered {
            if let wsi = exchange.wsi { lws_callback_on_writable(wsi) }
        }
        let starts: [ClientStart] = clientQueue.withLock { queue in
            let all = queue
            queue = []
            return all
        }
        for start in starts {
            let connection = start.connection
            let opaque = Unmanaged.passRetained(connection).toOpaque()
            let wsi: OpaquePointer? = start.host.withCString { hostPointer in
                start.path.withCString { pathPointer in
                    majlis_lws_client_connect(context, hostPointer, Int32(start.port), pathPointer, start.tls ? 1 : 0, opaque)
                }
            }
            if wsi == nil {
                // lws may already have reported the failure through the callback, which released it.
                if !connection.state.withLock({ $0.closed }) {
                    Unmanaged<WebSocketConnection>.fromOpaque(opaque).release()
                    closed(connection, code: nil, reason: "could not connect to \(start.host):\(start.port)")
                }
            } else {
                connection.wsi = wsi
            }
        }
        write(items)
    }

    /// Writes at once what the sockets take; the rest waits for writable callbacks. Answers
    /// that come in meanwhile (from room threads) go before the rest of a broadcast.
    private func write(_ items: [WebSocketConnection]) {
        for (index, connection) in items.enumerated() {
            if index > 0 && index % urgentCheck == 0 {
                let urgent: [WebSocketConnection] = pending.withLock { state in
                    defer { state.urgent.removeAll(keepingCapacity: true) }
                    return state.urgent
                }
                for answer in urgent { write(answer) }
            }
            write(connection)
        }
    }

    private func write(_ connection: WebSocketConnection) {
        guard let wsi = connection.wsi, connection.established else { return }
        _ = flush(connection, wsi: wsi, inOwnCallback: false)
    }

    /// What a WebSocket ping carries (the pong echoes it).
    static let pingPayload = Array("majlis".utf8)

    /// The most bytes of queued messages one write of a server connection carries.
    static let coalescedBytes = 64 << 10

    /// The length of an unmasked WebSocket frame's header for a payload of `length` bytes
    /// (RFC 6455 section 5.2).
    static func frameHeaderLength(_ length: Int) -> Int {
        length < 126 ? 2 : length <= 0xFFFF ? 4 : 10
    }

    /// Writes the header of one final, unmasked text frame of `length` bytes at `target`;
    /// returns its length.
    static func writeFrameHeader(length: Int, to target: UnsafeMutablePointer<UInt8>) -> Int {
        target[0] = 0x81  // FIN, text
        if length < 126 {
            target[1] = UInt8(length)
            return 2
        }
        if length <= 0xFFFF {
            target[1] = 126
            target[2] = UInt8(length >> 8)
            target[3] = UInt8(length & 0xFF)
            return 4
        }
        target[1] = 127
        for byte in 0..<8 { target[2 + byte] = UInt8(UInt64(length) >> (56 - 8 * UInt64(byte)) & 0xFF) }
        return 10
    }

    /// Writes queued items while the socket takes them. Only in the connection's own writable
    /// callback (`inOwnCallback`) may it close the connection (by returning -1); elsewhere a close
    /// request waits for that callback.
    func flush(_ connection: WebSocketConnection, wsi: OpaquePointer, inOwnCallback: Bool) -> Int32 {
        assertOnServiceThread()
        enum Step {
            case messages([WebSocketConnection.Outgoing])
            case ping
            case close(UInt16, String)
            case wait
            case nothing
        }
        while true {
            if connection.broken { return inOwnCallback ? -1 : 0 }
            if lws_partial_buffered(wsi) != 0 {
                lws_callback_on_writable(wsi)
                return 0
            }
            let step: Step = connection.state.withLock { state in
                if state.pendingPing {
                    state.pendingPing = false
                    return .ping
                }
                if !state.outbox.isEmpty {
                    // A server's frames are framed here, and all that is queued (up to
                    // `coalescedBytes`) goes in one write: a room's events often come several at
                    // a time (levels and qualities, a seat change and its members), and a write
                    // costs the same for one small frame as for several. A client's are masked,
                    // which lws does, one frame per write.
                    var count = 1
                    var bytes = state.outbox[0].data.count
                    while !connection.isClient, count < state.outbox.count, bytes + state.outbox[count].data.count <= Self.coalescedBytes {
                        bytes += state.outbox[count].data.count
                        count += 1
                    }
                    state.outboxBytes -= bytes
                    let taken = Array(state.outbox.prefix(count))
                    state.outbox.removeFirst(count)
                    return .messages(taken)
                }
                if let request = state.closeRequest {
                    // Not while an oversized message is still arriving: closing then resets the
                    // connection before the peer can read why.
                    return inOwnCallback && !connection.discardingOversize ? .close(request.code, request.reason) : .wait
                }
                return .nothing
            }
            switch step {
            case .nothing:
                return 0
            case .wait:
                lws_callback_on_writable(wsi)
                return 0
            case .ping:
                // With a payload: lws hands an empty pong to no callback, so its arrival would go
                // unnoticed and a peer that answers every ping would still time out.
                var buffer = [UInt8](repeating: 0, count: pre) + Self.pingPayload
                if buffer.withUnsafeMutableBufferPointer({ lws_write(wsi, $0.baseAddress! + pre, Self.pingPayload.count, LWS_WRITE_PING) }) < 0 {
                    connection.broken = true
                }
            case .messages(let messages):
                let total = connection.isClient ? messages[0].data.count : messages.reduce(0) { $0 + Self.frameHeaderLength($1.data.count) + $1.data.count }
                if scratch.count < pre + total { scratch = [UInt8](repeating: 0, count: max(pre + total, 2 * scratch.count)) }
                let written = scratch.withUnsafeMutableBufferPointer { buffer in
                    // Copied in after lws's headroom, each in one move (a broadcast writes
                    // thousands of these back to back).
                    var offset = pre
                    for message in messages {
                        if !connection.isClient { offset += Self.writeFrameHeader(length: message.data.count, to: buffer.baseAddress! + offset) }
                        message.data.withUnsafeBytes { bytes in
                            if let source = bytes.baseAddress {
                                (buffer.baseAddress! + offset).update(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
                            }
                        }
                        offset += message.data.count
                    }
                    // LWS_WRITE_HTTP writes the bytes as they are, whole frames here.
                    return lws_write(wsi, buffer.baseAddress! + pre, total, connection.isClient ? LWS_WRITE_TEXT : LWS_WRITE_HTTP)
                }
                if written < total {
                    connection.broken = true
                } else {
                    let now = MonotonicClock.nanoseconds()
                    writeDelays.withLock { delays in
                        for message in messages {
                            let delay = Int((now &- message.since) / 1000)
                            if message.urgent { delays.answers.record(microseconds: delay) } else { delays.events.record(microseconds: delay) }
                        }
                    }
                }
            case .close(let code, let reason):
                var bytes = Array(reason.utf8)
                bytes.withUnsafeMutableBufferPointer { lws_close_reason(wsi, lws_close_status(UInt32(code)), $0.baseAddress, $0.count) }
                return -1
            }
            if connection.broken {
                if inOwnCallback { return -1 }
                lws_callback_on_writable(wsi)
                return 0
            }
        }
    }

    /// Collects a (possibly fragmented) message; returns -1 to close.
    func receive(_ connection: WebSocketConnection, wsi: OpaquePointer, bytes: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        assertOnServiceThread()
        connection.touch()
        let first = lws_is_first_fragment(wsi) != 0
        if first { connection.discardingBinary = lws_frame_is_binary(wsi) != 0 }
        let complete = majlis_lws_message_complete(wsi) != 0
        if connection.discardingBinary {
            // Binary frames are reserved; v1 ignores them.
            return 0
        }
        if !connection.discardingOversize && connection.state.withLock({ $0.closeRequest != nil }) {
            return 0  // closing: nothing more is read as a request
        }
        // What a server sends on a connection made from here (a node's relay link) is not a
        // client's request: it is bounded as a client bounds it (a room's snapshot or a page of
        // history may pass a client's 64 KiB).
        let maxMessageBytes = connection.isClient ? max(self.maxMessageBytes, Self.serverMessageBytes) : self.maxMessageBytes
        if connection.discardingOversize || connection.receiveBuffer.count + length > maxMessageBytes {
            // Too big: it is refused with 1009 once it has all arrived, what arrives meanwhile
            // thrown away (closing while the peer still sends resets the connection, and the peer
            // never reads why); a peer that goes on past a further 1 MiB is cut off at once.
            if !connection.discardingOversize {
                connection.discardingOversize = true
                connection.discardedBytes = connection.receiveBuffer.count
                connection.receiveBuffer = Data()
                connection.state.withLock { $0.closeRequest = (1009, "message larger than \(maxMessageBytes) bytes") }
            }
            connection.discardedBytes += length
            if connection.discardedBytes > maxMessageBytes + (1 << 20) {
                var reason = Array("message larger than \(maxMessageBytes) bytes".utf8)
                reason.withUnsafeMutableBufferPointer { lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, $0.baseAddress, $0.count) }
                return -1
            }
            if complete {
                connection.discardingOversize = false
                lws_callback_on_writable(wsi)
            }
            return 0
        }
        if let bytes, length > 0 { connection.receiveBuffer.append(bytes.assumingMemoryBound(to: UInt8.self), count: length) }
        if complete {
            let message = connection.receiveBuffer
            connection.receiveBuffer = Data()
            // A client checks a message's UTF-8 here, not in lws: lws 4.1's client corrupts its
            // heap when it closes for bad UTF-8 in a frame longer than about 10 KB. (A server's
            // lws checks as the frame arrives, and closes cleanly.)
            if connection.isClient && String(validating: message, as: UTF8.self) == nil {
                connection.state.withLock { $0.closeRequest = (1007, "bad utf8") }
                var reason = Array("bad utf8".utf8)
                reason.withUnsafeMutableBufferPointer { lws_close_reason(wsi, LWS_CLOSE_STATUS_INVALID_PAYLOAD, $0.baseAddress, $0.count) }
                return -1
            }
            connection.messageReceivedAt = MonotonicClock.nanoseconds()
            connection.delegate?.webSocket(connection, didReceive: message)
        }
        return 0
    }

    // MARK: HTTP (service thread)

    /// A new HTTP request: handled now, or once its body (`contentLength` bytes) has arrived.
    /// A chunked body is refused (411): API clients send a length. Returns -1 to close.
    ///
    /// A body over the limit is read and thrown away, and answered 413 once it has all arrived:
    /// closing while the peer still sends resets the connection before it can read why. A body
    /// declared larger than `maxDiscardedBody` is refused at once.
    ///
    /// A body is kept only when `refuseBody` allows it (the path takes one and the caller may
    /// send it); a refused one is read and thrown away, then answered. The whole request must
    /// arrive within `requestDeadline` seconds, or it is answered 408 and closed.
    ///
    /// A body `bodySink` takes goes to its sink as it arrives, whatever its length; it may take
    /// as long as it goes on arriving (a connection silent for `requestDeadline` is closed).
    func beginHTTP(_ request: HTTPRequest, wsi: OpaquePointer, contentLength: Int?, chunked: Bool) -> Int32 {
        assertOnServiceThread()
        let exchange = HTTPExchange(request: request, loop: self, wsi: wsi)
        if chunked {
            _ = respondNow(exchange, Self.lengthRequired, wsi: wsi)
            return -1
        }
        if let contentLength, contentLength > 0, let sink = bodySink?(request) {
            arriving[wsi] = ArrivingBody(request: request, refusal: Self.tooLarge, since: clock.now(), sink: sink)
            lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(requestDeadline))
            return 0
        }
        if let contentLength, contentLength > Self.maxDiscardedBody {
            _ = respondNow(exchange, Self.tooLarge, wsi: wsi)
            return -1
        }
        guard let contentLength, contentLength > 0 else { return dispatchHTTP(request, wsi: wsi) }
        var entry = ArrivingBody(request: request, refusal: Self.tooLarge, since: clock.now())
        if let refusal = refuseBody?(request) {
            entry.request = nil
            entry.refusal = refusal
        } else if contentLength > Self.maxRequestBody {
            entry.request = nil
        }
        arriving[wsi] = entry
        // libwebsockets closes a connection silent for this long; one that trickles is closed
        // at its next bytes past the deadline (`receiveHTTPBody`).
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(requestDeadline))
        return 0
    }

    /// More of the body: kept, or thrown away when refused or once past the limit. Past the
    /// request's deadline it is answered 408 and the connection closed (returns -1).
    func receiveHTTPBody(wsi: OpaquePointer, bytes: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        guard var entry = arriving[wsi] else { return 0 }
        if let sink = entry.sink {
            if let bytes, length > 0 { sink.receive(UnsafeRawBufferPointer(start: bytes, count: length)) }
            lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(requestDeadline))  // silent this long: closed
            return 0
        }
        if clock.now() - entry.since > Duration.seconds(requestDeadline).milliseconds {
            arriving[wsi] = nil
            _ = respondNow(HTTPExchange(request: HTTPRequest(method: "", path: ""), loop: self, wsi: wsi), Self.timedOut, wsi: wsi)
            return -1
        }
        guard var request = entry.request else { return 0 }  // thrown away
        entry.request = nil  // no copy while appending
        if request.body.count + length > Self.maxRequestBody {
            arriving[wsi] = entry
            return 0
        }
        arriving[wsi] = entry
        if let bytes, length > 0 { request.body.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: length)) }
        entry.request = request
        arriving[wsi] = entry
        return 0
    }

    /// The body is complete: the request is handled, or (refused, or over the limit) answered
    /// and the connection closed. Returns -1 to close.
    func completeHTTPBody(wsi: OpaquePointer) -> Int32 {
        guard let entry = arriving.removeValue(forKey: wsi) else { return 0 }
        if let sink = entry.sink, let request = entry.request {
            lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
            let exchange = HTTPExchange(request: request, loop: self, wsi: wsi)
            exchanges[wsi] = exchange
            sink.finish(exchange)
            return writeHTTP(wsi: wsi)
        }
        guard let request = entry.request else {
            let refused = HTTPRequest(method: "", path: "")
            _ = respondNow(HTTPExchange(request: refused, loop: self, wsi: wsi), entry.refusal, wsi: wsi)
            return -1
        }
        return dispatchHTTP(request, wsi: wsi)
    }

    /// Answers a request that cannot be read (400, e.g. two Content-Length headers) and closes.
    func refuseHTTP(wsi: OpaquePointer, _ message: StaticString) -> Int32 {
        assertOnServiceThread()
        let answer = HTTPResponse(status: 400, body: Array(#"{"error":{"code":"bad_request","message":"\#(message)"}}"#.utf8))
        _ = respondNow(HTTPExchange(request: HTTPRequest(method: "", path: ""), loop: self, wsi: wsi), answer, wsi: wsi)
        return -1
    }

    private func dispatchHTTP(_ request: HTTPRequest, wsi: OpaquePointer) -> Int32 {
        let exchange = HTTPExchange(request: request, loop: self, wsi: wsi)
        exchanges[wsi] = exchange
        if let httpHandler {
            httpHandler(exchange)
        } else {
            exchange.respond(HTTPResponse(status: 404, body: Array(#"{"error":"not found"}"#.utf8)))
        }
        return writeHTTP(wsi: wsi)
    }

    /// Writes the answer of the exchange on `wsi` if it has one. Returns -1 to close.
    func writeHTTP(wsi: OpaquePointer) -> Int32 {
        assertOnServiceThread()
        guard let exchange = exchanges[wsi], let answer = exchange.answer else { return 0 }
        exchanges[wsi] = nil
        return respondNow(exchange, answer, wsi: wsi)
    }

    /// What every answer carries unless it says otherwise: nothing may frame it, sniff its type
    /// or be told where it came from; an answer that is not a page runs nothing.
    static let securityHeaders = [
        "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
        "Cross-Origin-Resource-Policy": "same-origin",
    ]

    private func respondNow(_ exchange: HTTPExchange, _ answer: HTTPResponse, wsi: OpaquePointer) -> Int32 {
        exchange.wsi = nil
        // An answer's own header wins; one it sets empty is left out.
        let headers = answer.headers.merging(Self.securityHeaders) { own, _ in own }.filter { !$0.value.isEmpty }
        let extra = headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n")
        let result = answer.body.withUnsafeBufferPointer { body in
            // HEAD: the headers a GET would get (its Content-Length too), no body.
            majlis_lws_http_respond(wsi, answer.status, answer.contentType, extra, body.baseAddress, body.count, exchange.request.method == "HEAD" ? 1 : 0)
        }
        return result != 0 ? -1 : 0
    }

    /// The HTTP connection closed: answers still to come are dropped.
    func closedHTTP(wsi: OpaquePointer) {
        assertOnServiceThread()
        arriving.removeValue(forKey: wsi)?.sink?.cut()
        exchanges.removeValue(forKey: wsi)?.wsi = nil
    }

    private static let timedOut = HTTPResponse(
        status: 408, body: Array(#"{"error":{"code":"bad_request","message":"the request took too long to arrive"}}"#.utf8))
    private static let lengthRequired = HTTPResponse(
        status: 411, body: Array(#"{"error":{"code":"bad_request","message":"send the body with a Content-Length"}}"#.utf8))
    private static let tooLarge = HTTPResponse(
        status: 413, body: Array(#"{"error":{"code":"too_large","message":"the request body is larger than 1 MiB"}}"#.utf8))

    func closed(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        let wasOpen: Bool = connection.state.withLock { state in
            defer {
                state.closed = true
                state.outbox = []
                state.outboxBytes = 0
            }
            return !state.closed
        }
        connection.wsi = nil
        if wasOpen { connection.delegate?.webSocketDidClose(connection, code: code, reason: reason) }
        // Nothing more will be said to the delegate: whoever still holds the connection (a
        // task of its owner's, say) does not keep the owner too.
        connection.delegateBox.withLock { $0 = nil }
    }
}
