import CLibWebSockets
import Synchronization

/// One HTTP request and its answer to come. The handler answers with `respond(_:)`, at once or
/// later from any thread (after a room's queue ran the request, say); the service thread writes
/// it. An answer for a peer that has gone is dropped.
public final class HTTPExchange: Sendable {
    public let request: HTTPRequest
    private let response = Mutex<HTTPResponse?>(nil)
    private let loop: ServiceLoop
    /// The connection (service thread only); nil once it closed.
    nonisolated(unsafe) var wsi: OpaquePointer?

    init(request: HTTPRequest, loop: ServiceLoop, wsi: OpaquePointer) {
        self.request = request
        self.loop = loop
        self.wsi = wsi
    }

    /// Answers the request; only the first answer counts.
    public func respond(_ answer: HTTPResponse) {
        let first = response.withLock { current in
            guard current == nil else { return false }
            current = answer
            return true
        }
        if first { loop.schedule(self) }
    }

    /// The answer once given (service thread: it is written then).
    var answer: HTTPResponse? { response.withLock { $0 } }
}
