import Foundation
import MajlisProtocol
import MajlisRoom
import MajlisTransport

/// The ops on a session itself (docs/protocol.md section 4): `hello`, `ping`, `session.renew`,
/// `bye`; and what becomes of a session's user when its connection closes.
final class SessionRequests: Sendable {
    private let context: ServerContext
    private let sessions: SessionTable
    private let precall: PrecallRequests
    /// Told when a user's first session on this node opens and their last closes (presence).
    private let messaging: MessagingRequests

    init(context: ServerContext, sessions: SessionTable, precall: PrecallRequests, messaging: MessagingRequests) {
        self.context = context
        self.sessions = sessions
        self.precall = precall
        self.messaging = messaging
    }

    /// Carries out `op` (request `re`) for `caller` on `session`, and answers it.
    func handle(_ op: SessionOp, re: Int64, session: Session, caller: Caller) {
        switch op {
        case .ping:
            struct Pong: Encodable {
                var t: Int64
                var nodes: [ClusterNode]?
            }
            session.send(WireEncoder.success(re: re, data: Pong(t: context.now(), nodes: clusterNodes())))
        case .renew(let token):
            renew(token, re: re, session: session)
        case .bye:
            session.state.withLock { $0.leave() }
            for link in session.relays.withLock({ Array($0.links.values) }) { link.send(own: RelayLink.byeId, op: "bye", args: EmptyData()) }
            for room in context.presence.rooms(of: caller.id, device: session.device) {
                context.rooms.withHost(room, context: context) { try? $0.get().drop(caller.id, reason: "left") }
            }
            session.send(WireEncoder.success(re: re, data: EmptyData()))
            session.connection.close(code: 1000, reason: "bye")
        }
    }

    /// `hello`: the token verified, the address's count checked, the user bound to this session
    /// (a session it had before is replaced, 4004), its rooms resumed.
    func hello(_ args: HelloArgs, re: Int64, session: Session) {
        let claims: AccessClaims
        do throws(ProtocolError) {
            claims = try AccessToken.verify(args.token, keys: context.config.keys, now: context.now() / 1000)
            if let refusal = revoked(claims) { throw refusal }
        } catch {
            context.metrics.count(.loginsRejected)
            context.logger.log(
                .warning, "login rejected from \(session.connection.peer): \(error)", event: "login.rejected",
                fields: ["peer": session.connection.peer, "reason": "\(error)"])
            session.send(WireEncoder.failure(re: re, error))
            session.connection.close(code: CloseCode.unauthorized.rawValue, reason: error.message)
            return
        }
        // A session another node of the cluster relays is counted against the client's address
        // that node states (signed: `RelayStatement`) instead of the node's; a statement not
        // believed changes nothing.
        var client: String?
        if let via = args.via, let relay = args.relay {
            client = RelayStatement.client(in: relay, seal: context.seal, via: via, now: context.now())
        }
        let most = context.config.maxConnectionsPerAddress
        guard sessions.admit(session, countingAgainst: client, most: most) else {
            session.send(WireEncoder.failure(re: re, ProtocolError(.rateLimited, "too many connections from your address (at most \(most))")))
            session.connection.close(code: CloseCode.policy.rawValue, reason: "too many connections from your address (at most \(most))")
            return
        }
        let previousId = args.resume
        let device = args.device ?? ""
        let (replaced, rooms, first) = context.presence.bind(claims.sub, device: device, to: session)
        if first { messaging.cameOnline(claims.sub) }
        let resumed = previousId != nil && (replaced?.sessionId == previousId || !rooms.isEmpty)
        let sessionId = resumed ? previousId! : "s" + HMACSHA256.randomBytes(12).map { String(format: "%02x", $0) }.joined()
        do throws(ProtocolError) {
            try session.state.withLock { state throws(ProtocolError) in try state.greet(claims, id: sessionId, device: device, at: context.now()) }
        } catch {
            session.send(WireEncoder.failure(re: re, error))
            return
        }
        session.relays.withLock { table in
            table.token = args.token
            table.via = args.via
        }
        if let replaced {
            replaced.state.withLock { $0.leave() }
            replaced.connection.close(code: CloseCode.replaced.rawValue, reason: "replaced by a newer connection")
        }
        // One device a user: the user's sessions on its other devices end, on every node.
        if context.config.oneDevicePerUser {
            let ending = SessionEnding.elsewhere(claims.sub, keep: sessionId, signedInAt: session.greetedAt ?? context.now())
            ending.carryOut(on: context.presence)
            context.messagingBus?.publish(ending)
        }
        // A hello read off the service thread may finish after its connection closed: then the
        // user is not left present through a dead connection.
        guard sessions.isOpen(session) else { return release(session) }
        for room in rooms { context.rooms.withHost(room, context: context) { try? $0.get().reconnect(claims.sub) } }
        struct HelloData: Encodable {
            struct User: Encodable { var id: String; var name: String }
            struct Server: Encodable { var version: String; var node: String }
            var session: String
            var user: User
            var server: Server
            var heartbeat: Int
            var expiresAt: Int64
            var resumed: Bool
            var rooms: [String]
            var nodes: [ClusterNode]?
        }
        let data = HelloData(
            session: sessionId, user: .init(id: claims.sub, name: DisplayName.clean(claims.name ?? claims.sub)),
            server: .init(version: SignalingServer.version, node: context.config.node), heartbeat: context.config.heartbeat,
            expiresAt: claims.exp, resumed: !rooms.isEmpty, rooms: rooms.sorted(), nodes: clusterNodes())
        session.send(WireEncoder.success(re: re, data: data))
        // Logs the app asked of this user while no session of theirs was open (a session another
        // node relays is its edge node's to tell).
        if args.via == nil { messaging.pendingLogRequests(of: claims.sub, to: session, now: context.now()) }
    }

    /// A closed connection's user is no longer present through it: its links to other nodes
    /// close, its pre-call tests end, and its rooms hold it for the resume grace (unless it
    /// said `bye`). Harmless when done twice.
    func release(_ session: Session) {
        let links = session.relays.withLock { table in
            table.closed = true
            defer { table.links = [:] }
            return Array(table.links.values)
        }
        for link in links { link.close() }
        guard let user = session.userId else { return }
        precall.end(session: session, user: user)
        let leaving = session.state.withLock { $0.leaving }
        guard let (rooms, last) = context.presence.unbind(user, device: session.device, session: session) else { return }
        if last { messaging.wentOffline(user) }
        guard !leaving else { return }
        for room in rooms {
            context.rooms.withHost(room, context: context) { try? $0.get().disconnect(user) }
        }
    }

    /// Why `claims` may not open or renew a session: the app's backend revoked the user's
    /// sessions after (or in the second) the token was issued. A store that cannot be read lets
    /// the token in, as rooms go on through a store outage.
    private func revoked(_ claims: AccessClaims) -> ProtocolError? {
        guard let revocation = try? context.store.revocation(of: claims.sub), revocation.refuses(issuedAt: claims.iat) else { return nil }
        return ProtocolError(.unauthorized, "the user's sessions were revoked (\(revocation.reason)): sign in again for a new token")
    }

    private func renew(_ token: String, re: Int64, session: Session) {
        do throws(ProtocolError) {
            let claims = try AccessToken.verify(token, keys: context.config.keys, now: context.now() / 1000)
            if let refusal = revoked(claims) { throw refusal }
            try session.state.withLock { state throws(ProtocolError) in try state.renew(claims) }
            let links = session.relays.withLock { table in
                table.token = token
                return Array(table.links.values)
            }
            for link in links { link.send(own: RelayLink.renewId, op: "session.renew", args: ["token": token]) }
            session.send(WireEncoder.success(re: re, data: ["expiresAt": claims.exp]))
        } catch {
            session.send(WireEncoder.failure(re: re, error))
        }
    }

    /// A live node of the cluster, as `hello` and `ping` answers list them.
    struct ClusterNode: Encodable {
        var id: String
        var signaling: String
    }

    /// In a cluster, the live nodes a client may connect to when this one goes away (as the last
    /// report found them); nil for a lone server.
    private func clusterNodes() -> [ClusterNode]? {
        context.registry.map { $0.lastKnown.filter { $0.state == .active }.map { ClusterNode(id: $0.id, signaling: $0.signaling) } }
    }
}
