import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// One session's signaling relayed to the node that hosts some of its rooms: a WebSocket to
/// that node's signaling, greeted with the session's own token (`hello` with `via`, so that the
/// other node does not relay it further). The client's frames for those rooms go out as they
/// came, ids and all; every answer and event the other node sends comes back to the client as
/// it was sent, in order. A session has one link per node; the node sees the link as the
/// user's connection.
///
/// Threads: frames go out from whichever thread read the client's; what the node sends is
/// read on the server's own service thread (a `wss://` node: a relay client's) and queued on
/// the client's connection there.
final class RelayLink: WebSocketDelegate, Sendable {
    /// The node at the other end.
    let node: String
    private let session: Session
    /// What a frame is answered when the node cannot be reached (`conflict` naming the node).
    private let unreachable: ProtocolError
    /// Told once when the link has closed: whether it had opened, and the node's close code and reason.
    private let gone: @Sendable (_ link: RelayLink, _ opened: Bool, _ code: UInt16?, _ reason: String) -> Void
    private let hello: Data
    private let state = Mutex(State())

    private struct State {
        var connection: WebSocketConnection?
        /// The node answered `hello`: frames go out as they come.
        var open = false
        var closed = false
        /// This side closed it (the session ended): nobody is told.
        var closedHere = false
        /// Frames that came before `hello` was answered.
        var queued: [Data] = []
        /// Relayed requests not yet answered: their ids, and the room each was for.
        var pending: [Int64: String] = [:]
        /// Why the node refused the link's `hello` (too many connections from the client's
        /// address): what its requests are answered.
        var refusal: ProtocolError?
    }

    /// The ids of the link's own requests (chosen where no client's are expected; their answers
    /// are not passed on).
    static let helloId = Int64.min
    static let renewId = Int64.min + 1
    static let byeId = Int64.min + 2

    init(
        node: String, session: Session, token: String, from here: String, statement: String, unreachable: ProtocolError,
        gone: @escaping @Sendable (_ link: RelayLink, _ opened: Bool, _ code: UInt16?, _ reason: String) -> Void
    ) {
        self.node = node
        self.session = session
        self.unreachable = unreachable
        self.gone = gone
        hello = Self.request(id: Self.helloId, op: "hello", args: HelloArgs(
                token: token, client: .init(sdk: "majlis-relay", version: SignalingServer.version), device: session.device.isEmpty ? nil : session.device,
                via: here, relay: statement))
    }

    /// How long the node has to answer `hello` (a node that has stopped, or is paused, may
    /// take the connection and never answer); then the link closes and its requests are
    /// answered `conflict`.
    static let openTimeout = 3.0

    /// Opens the connection to `url` with `connect`; on failure the link closes at once.
    func open(_ url: String, connect: (_ url: String, _ delegate: any WebSocketDelegate) throws -> WebSocketConnection) {
        do {
            let connection = try connect(url, self)
            let closeNow = state.withLock { state in
                state.connection = connection
                return state.closedHere || state.closed
            }
            if closeNow { connection.close(code: 1000, reason: "the client left") }
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.openTimeout) { [weak self] in self?.expire() }
        } catch {
            finish(code: nil, reason: "\(error)")
        }
    }

    /// Closes the link if `hello` is not answered yet.
    private func expire() {
        let connection: WebSocketConnection?? = state.withLock { state in state.open || state.closed ? .none : .some(state.connection) }
        guard case .some(let connection) = connection else { return }
        connection?.close(code: 1000, reason: "no answer")
        finish(code: nil, reason: "node \(node) did not answer within \(Self.openTimeout) s")
    }

    /// Sends a client's request `frame` (its `id` is `id`, for `room`) to the node, or queues it
    /// until the node has answered `hello`. A link that has closed answers it at once.
    func forward(_ frame: Data, id: Int64, room: String) {
        let connection: WebSocketConnection?? = state.withLock { state in
            guard !state.closed else { return .none }
            state.pending[id] = room
            if state.open { return .some(state.connection) }
            state.queued.append(frame)
            return .some(nil)
        }
        switch connection {
        case .none: session.send(WireEncoder.failure(re: id, unreachable))
        case .some(let connection?): connection.send(frame)
        case .some(nil): break
        }
    }

    /// Sends the link's own request (`session.renew`, `bye`): its answer stays here.
    func send(own id: Int64, op: String, args: some Encodable) {
        let frame = Self.request(id: id, op: op, args: args)
        let connection: WebSocketConnection? = state.withLock { state in
            guard !state.closed else { return nil }
            if state.open { return state.connection }
            state.queued.append(frame)
            return nil
        }
        connection?.send(frame)
    }

    /// Closes the link from this side (the client's session ended): the node holds the user's
    /// rooms for the resume grace, as for any dropped connection.
    func close() {
        let connection = state.withLock { state in
            state.closedHere = true
            return state.connection
        }
        connection?.close(code: 1000, reason: "the client left")
    }

    // MARK: WebSocketDelegate (the relay client's thread)

    func webSocketDidOpen(_ connection: WebSocketConnection) {
        let closeNow = state.withLock { state in
            state.connection = connection
            return state.closedHere || state.closed
        }
        if closeNow { return connection.close(code: 1000, reason: "the client left") }
        connection.send(hello)
    }

    func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {
        switch ServerFrame(parsing: message) {
        case .none:
            // Not the protocol's: passed on as it came, for the client to judge.
            session.send(message, urgent: false)
        case .event(let name, _):
            // The client has its own `token.expiring` from this node.
            if name != Self.tokenExpiring { session.send(message, urgent: false) }
        case .answer(Self.helloId, let outcome):
            if case .failure(let error) = outcome {
                if error.code == .rateLimited {
                    let refusal = ProtocolError(.rateLimited, "too many connections from your address on node \(node), which hosts the room")
                    state.withLock { $0.refusal = refusal }
                }
                connection.close(code: 1000, reason: "hello refused")
                return
            }
            let queued = state.withLock { state in
                guard !state.closed else { return [Data]() }
                state.open = true
                defer { state.queued = [] }
                return state.queued
            }
            for frame in queued { connection.send(frame) }
        case .answer(Self.renewId, _), .answer(Self.byeId, _):
            break
        case .answer(let re, let outcome):
            let room = state.withLock { $0.pending.removeValue(forKey: re) }
            // The node no longer hosts the room: its next op finds where it is now.
            if let room, case .failure(let error) = outcome, error.code == .conflict {
                session.relays.withLock { table in if table.rooms[room] == node { table.rooms[room] = nil } }
            }
            session.send(message)
        }
    }

    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        finish(code: code, reason: reason)
    }

    /// The link is closed: requests still waiting are answered, and the server told.
    private func finish(code: UInt16?, reason: String) {
        let (first, opened, pending, here, refusal) = state.withLock { state in
            defer {
                state.closed = true
                state.pending = [:]
                state.queued = []
            }
            return (!state.closed, state.open, state.pending, state.closedHere, state.refusal)
        }
        guard first else { return }
        if !here {
            let error =
                opened
                ? ProtocolError(.conflict, "node \(node), which hosts the room, went away before it answered: try again", host: unreachable.host)
                : refusal ?? unreachable
            for id in pending.keys.sorted() { session.send(WireEncoder.failure(re: id, error)) }
        }
        gone(self, opened, code, reason)
    }

    // MARK: Frames

    private static func request(id: Int64, op: String, args: some Encodable) -> Data {
        var frame = Data(#"{"id":\#(id),"op":"\#(op)","args":"#.utf8)
        frame.append(WireEncoder.encode(args))
        frame.append(UInt8(ascii: "}"))
        return frame
    }

    private static let tokenExpiring = ServerEvent.tokenExpiring(expiresAt: 0).name
}
