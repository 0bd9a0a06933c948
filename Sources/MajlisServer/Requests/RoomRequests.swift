import Foundation
import MajlisPacks
import MajlisProtocol
import MajlisRoom
import MajlisTransport
import Synchronization

/// Room ops: carried to the room's host on this node (loaded, created or placed as the route
/// says), or over the session's link to the node that hosts the room (`RelayLink`), opened
/// when this node answers `conflict` naming another.
final class RoomRequests: Sendable {
    private let context: ServerContext
    /// Where links connect from: a `ws://` node from the server's own listener (set once it
    /// listens), a `wss://` node from a relay client made when first needed; nothing once stopped.
    private let connectors = Mutex<(server: WebSocketServer?, client: WebSocketClient?, stopped: Bool)>((nil, nil, false))

    init(context: ServerContext) {
        self.context = context
    }

    /// The server listens: links to `ws://` nodes are opened on its service thread.
    func listening(on server: WebSocketServer) {
        connectors.withLock { $0.server = server }
    }

    /// Carries out a room op routed here (`.room`), or over the session's link (`.relay`).
    /// `frame` is the request as it came (relayed as it is); `receivedAt` when it arrived (monotonic ns).
    func handle(_ route: RoomRoute, relayedTo node: String?, request: IncomingRequest, frame: Data, session: Session, caller: Caller, receivedAt: UInt64) {
        // A room this session reaches through another node: straight there.
        if let node, let link = session.relays.withLock({ $0.links[node] }) {
            link.forward(frame, id: request.id, room: route.room)
            return
        }
        // An emoji names a pack and item the server keeps (a client's catalogue may be older
        // than the current one: any version not yet pruned).
        if case .sendEmoji(_, let pack, let item) = route.command, !context.packIndex.has(pack, item: item, kind: .emoji) {
            let error = ProtocolError(.badRequest, "no emoji \(item) in a pack \(pack) this server keeps (GET /v1/packs lists them)")
            return refuse(error, request: request, session: session, caller: caller, receivedAt: receivedAt)
        }
        // A room in memory is handed over at once; one to load or create waits for the loader
        // (the store is never touched on this thread).
        let re = request.id
        context.rooms.withHost(route.room, creation: route.creation, placing: route.placing, context: context) { [self] result in
            switch result {
            case .success(let host):
                host.perform(re: re, op: request.op, rid: request.rid, command: route.command, session: session, caller: caller, receivedAt: receivedAt)
            case .failure(let error):
                if !relay(frame, id: re, room: route.room, refused: error, session: session) {
                    refuse(error, request: request, session: session, caller: caller, receivedAt: receivedAt)
                }
            }
        }
    }

    /// Answers a room op with `error`, counted in the ops' metrics (and a refused join logged).
    func refuse(_ error: ProtocolError, request: IncomingRequest, session: Session, caller: Caller, receivedAt: UInt64) {
        if case .room(let room, .join) = request.command {
            context.logger.log(
                .info, "room \(room): \(caller.id) may not join (\(error.code.rawValue))", event: "join.rejected",
                fields: ["room": room, "user": caller.id, "code": error.code.rawValue])
        }
        context.metrics.recordOp(request.op, result: error.code.rawValue, since: receivedAt)
        session.send(WireEncoder.failure(re: request.id, error))
    }

    /// No more links are opened; the `wss://` relay client stops.
    func stop() {
        let client = connectors.withLock { connectors in
            connectors.stopped = true
            connectors.server = nil
            defer { connectors.client = nil }
            return connectors.client
        }
        client?.stop()
    }

    /// Carries a request on a room another node hosts (`refused` is this node's `conflict`
    /// naming it) to that node, over the session's link to it; false when it cannot be relayed
    /// (no node named with its signaling, or the session is itself relayed from another node).
    private func relay(_ frame: Data, id: Int64, room: String, refused: ProtocolError, session: Session) -> Bool {
        guard refused.code == .conflict, let host = refused.host, let url = host.signaling, host.node != context.config.node,
            !session.connection.isClosed
        else { return false }
        let unreachable = ProtocolError(
            .conflict, "room \(room) is hosted on node \(host.node) (\(url)), which cannot be reached from here: connect there, or try again once it has moved",
            host: host)
        let here = context.config.node
        let statement = RelayStatement(node: here, client: session.address.withLock { $0 }, at: context.now()).sealed(with: context.seal)
        let made: (link: RelayLink, new: Bool)? = session.relays.withLock { table in
            guard !table.closed, table.via == nil, let token = table.token else { return nil }
            table.rooms[room] = host.node
            if let link = table.links[host.node] { return (link, false) }
            let link = RelayLink(node: host.node, session: session, token: token, from: here, statement: statement, unreachable: unreachable) {
                [weak self] link, opened, code, reason in
                self?.relayClosed(link, session: session, opened: opened, code: code, reason: reason)
            }
            table.links[host.node] = link
            return (link, true)
        }
        guard let made else { return false }
        made.link.forward(frame, id: id, room: room)
        if made.new { made.link.open(url) { [self] url, link in try connect(url, link) } }
        return true
    }

    /// Opens a link's connection: a `ws://` node's on the server's own service thread (no
    /// thread between the client's connection and the link), a `wss://` node's through the
    /// relay client.
    private func connect(_ url: String, _ link: any WebSocketDelegate) throws -> WebSocketConnection {
        let (server, client) = try connectors.withLock { connectors throws -> (WebSocketServer?, WebSocketClient?) in
            guard !connectors.stopped else { throw ProtocolError(.internal, "the server is stopping") }
            if url.hasPrefix("ws://"), let server = connectors.server { return (server, nil) }
            if let client = connectors.client { return (nil, client) }
            let made = try WebSocketClient(maxMessageBytes: 16 << 20)
            connectors.client = made
            return (nil, made)
        }
        if let server { return try server.connect(url: url, delegate: link) }
        guard let client else { throw ProtocolError(.internal, "the server is stopping") }
        return try client.connect(url: url, delegate: link)
    }

    /// A session's link to another node closed. One the node closed while it carried rooms
    /// ends the client's connection as the node ended it: the node went away or let the room
    /// go (1001 here: connect again, and join again), the user's newer connection replaced it
    /// (4004), the token expired (4001), or the user was kicked from the last room it was in
    /// (4003, when the session is in no other room). After `bye` (1000) nothing more happens;
    /// nor when the link never opened (its requests were answered `conflict`).
    private func relayClosed(_ link: RelayLink, session: Session, opened: Bool, code: UInt16?, reason: String) {
        let (mine, others) = session.relays.withLock { table in (table.remove(link) && !table.closed, !table.links.isEmpty) }
        guard mine, opened else { return }
        switch code {
        case 1000?:
            return
        case CloseCode.kicked.rawValue?:
            guard !others, let user = session.userId, context.presence.rooms(of: user, device: session.device).isEmpty else { return }
            session.connection.close(code: CloseCode.kicked.rawValue, reason: reason)
        case CloseCode.unauthorized.rawValue?, CloseCode.replaced.rawValue?:
            session.connection.close(code: code!, reason: reason)
        default:
            session.connection.close(code: CloseCode.goingAway.rawValue, reason: "node \(link.node), which hosts a room of yours, went away: connect again")
        }
    }
}
