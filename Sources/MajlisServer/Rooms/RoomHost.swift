import Dispatch
import Foundation
import MajlisForwarding
import MajlisProtocol
import MajlisRoom
import MajlisTransport
import Synchronization

/// One room's serial executor: owns the `RoomEngine`, applies every change to it in order on
/// `queue`, and carries out what the engine asks (store, answer, fan out). Because all changes
/// go through one queue, every race (two users, one seat) has exactly one winner.
final class RoomHost: @unchecked Sendable {
    // Audited: `engine`, `ended`, `unloaded` and `emptySince` are read and written only on `queue`
    // (checked in debug builds by `assertOnQueue`). `deadline` has its own lock.
    let id: String
    let queue: DispatchQueue
    private var engine: RoomEngine
    private var ended = false
    /// Unloaded while idle: requests that still reach this host go to the registry's new one.
    private var unloaded = false
    /// When the room last became empty (nil while it has members).
    private var emptySince: Int64?
    private let context: ServerContext
    private let deadline = Mutex<Int64?>(nil)
    private let members = Atomic<Int>(0)
    /// The members' connections as last looked up, for broadcasts to the whole room: valid while
    /// the member list and the presence generation are the ones it was made from (queue only).
    private var audience: (members: [String], generation: UInt64, connections: [WebSocketConnection])?
    private let seated = Atomic<Int>(0)
    /// In a cluster, the fence this node took for the room: every write carries it.
    private let fence: Int64?

    init(engine: RoomEngine, fence: Int64? = nil, context: ServerContext) {
        self.id = engine.id
        self.fence = fence
        self.engine = engine
        self.context = context
        self.queue = DispatchQueue(label: "majlis.room.\(engine.id)")
        self.emptySince = engine.memberIds.isEmpty ? context.now() : nil
        members.store(engine.memberIds.count, ordering: .relaxed)
    }

    /// How an answer is handed back: success and its data, or failure and the encoded error.
    typealias Answer = @Sendable (_ ok: Bool, _ body: Data) -> Void

    /// Applies a client's request and answers it on its session.
    /// `receivedAt`: when the request arrived (monotonic ns); the answer and the events it causes
    /// count their write delay from then.
    func perform(re: Int64, op: String, rid: String?, command: RoomCommand, session: Session, caller: Caller, receivedAt: UInt64? = nil) {
        perform(command, op: op, caller: caller, rid: rid, receivedAt: receivedAt) { [context] ok, body in
            let answer = WireEncoder.response(re: re, ok: ok, body: body)
            session.state.withLock { $0.chargeAnswer(answer.count, now: context.now()) }
            session.send(answer, since: receivedAt)
        }
    }

    /// Applies `command` from `caller` in order with every other change to the room, and hands
    /// the answer to `answer` (on the room's queue) before the events the command caused go out.
    /// A `rid` seen from the same caller for the same op in this room within its lifetime gets
    /// the first answer again. Replies are remembered per `ridOwner`: a member's by its id, the
    /// API's by the token that called (so a member's `rid` never answers for the API, nor one
    /// room's call for another's). `op` names the command in metrics.
    func perform(
        _ command: RoomCommand, op: String, caller: Caller, rid: String?, ridOwner: String? = nil, receivedAt: UInt64? = nil,
        answer reply: @escaping Answer
    ) {
        let replyKey = rid.map { (owner: ridOwner ?? "member:" + caller.id, rid: "\(id) \(op) \($0)") }
        let started = receivedAt ?? MonotonicClock.nanoseconds()
        let metrics = context.metrics
        let answer: Answer = { ok, body in
            reply(ok, body)
            metrics.recordOp(op, result: ServerMetrics.result(ok: ok, body: body), since: started)
        }
        queue.async { [self] in
            guard !ended else {
                answer(false, WireEncoder.encode(ProtocolError(.roomNotFound, "room \(id) has ended")))
                return
            }
            if unloaded {
                do {
                    guard let current = try context.rooms.host(id, context: context) else { throw ProtocolError(.roomNotFound, "no room \(id)") }
                    current.perform(command, op: op, caller: caller, rid: rid, ridOwner: ridOwner, receivedAt: receivedAt, answer: reply)
                } catch {
                    answer(false, WireEncoder.encode(error as? ProtocolError ?? ProtocolError(.internal, "the server could not load room \(id)")))
                }
                return
            }
            if let receivedAt { metrics.reachedRoomQueue(since: receivedAt) }
            if let refusal = leaseRefusal() {
                answer(false, WireEncoder.encode(refusal))
                return
            }
            let now = context.now()
            let ridSince = now - Int64(context.config.ridLifetime) * 1000
            if let replyKey, let remembered = try? context.store.rememberedReply(user: replyKey.owner, rid: replyKey.rid, since: ridSince) {
                answer(remembered.ok, remembered.body)
                return
            }
            // A change the store must hold is made on a copy, kept only once the store has it:
            // a failed write changes nothing, is answered `internal`, and is never acknowledged
            // later. (Other ops need no copy: the engine changes nothing when an op fails.)
            // With webhooks, the events the change caused are written in the same transaction.
            var outcome: RoomOutcome
            var failure: ProtocolError?
            let seatsBefore = webhooksOn ? engine.seats : []
            let wasMember = engine.isMember(caller.id)
            do {
                if command.mayStore {
                    var next = engine
                    outcome = next.handle(command, from: caller, now: now)
                    if let refusal = receiverOwnsTooMany(command, caller: caller, outcome: outcome) {
                        answer(false, WireEncoder.encode(refusal))
                        return
                    }
                    try persist(outcome, of: next, seatsBefore: seatsBefore, unbanned: Self.unbanned(command, outcome))
                    engine = next
                } else {
                    outcome = engine.handle(command, from: caller, now: now)
                    var joined: Member?
                    if case .join = command, !wasMember, case .success = outcome.reply { joined = engine.member(caller.id, now: now) }
                    persistOrLog(outcome, seatsBefore: seatsBefore, joined: joined)
                }
            } catch {
                context.logger.log(.error, "room \(id): store failed: \(error)", event: "store.error", fields: ["room": id, "error": "\(error)"])
                failure = ProtocolError(.internal, "the server could not store the change")
                outcome = RoomOutcome()
                if error is Store.Fenced { context.leases?.fenced(id) }
            }
            var body: Data
            var ok = true
            switch outcome.reply {
            case _ where failure != nil:
                ok = false
                body = WireEncoder.encode(failure!)
            case .success(.history(let before, let limit)):
                do {
                    body = WireEncoder.encode(["messages": try context.store.history(room: id, before: before, limit: limit)])
                } catch {
                    ok = false
                    body = WireEncoder.encode(ProtocolError(.internal, "the server could not read chat history"))
                }
            case .success(.webrtcOffer(let sdp, let seats)):
                (ok, body) = negotiate(sdp, seats: seats, user: caller.id)
            case .success(.snapshot(var snapshot)):
                // A join gets new media keys; so does a member that has none on this process: one
                // restored from the store after a restart, or with its room from another node,
                // which only syncs when it comes back.
                var media = context.media.mediaInfo(room: id, user: caller.id)
                if case .join = command { media = nil }
                if media == nil, engine.isMember(caller.id) {
                    context.media.join(room: id, user: caller.id)
                    media = context.media.mediaInfo(room: id, user: caller.id)
                }
                snapshot.media = media
                snapshot.seats = withSSRCs(snapshot.seats)
                body = WireEncoder.encode(RoomReply.snapshot(snapshot))
            case .success(let reply):
                body = WireEncoder.encode(reply)
            case .failure(let error):
                ok = false
                body = WireEncoder.encode(error)
            }
            if let replyKey, failure == nil {
                try? context.store.rememberReply(user: replyKey.owner, rid: replyKey.rid, reply: Store.RememberedReply(ok: ok, body: body, at: now))
            }
            if ok, !caller.isOperator, case .success(.snapshot) = outcome.reply { context.presence.joined(caller.id, room: id) }
            if !ok, case .join = command { logRejectedJoin(caller.id, body) }
            applySpeakingRights()  // before the caller hears its change went through
            answer(ok, body)
            finish(outcome, since: receivedAt)
        }
    }

    /// A room handed over counts against the receiver's rooms, as one it created would; asked
    /// once the engine has allowed the handover, so a caller who may not make it hears why.
    private func receiverOwnsTooMany(_ command: RoomCommand, caller: Caller, outcome: RoomOutcome) -> ProtocolError? {
        guard case .transferOwner(let receiver) = command, !caller.grants.admin, receiver != engine.owner,
            case .success = outcome.reply, let owned = try? context.store.roomCount(ownedBy: receiver),
            owned >= context.config.maxRoomsPerUser
        else { return nil }
        return ProtocolError(.forbidden, "\(receiver) already owns \(owned) rooms, the most one user may")
    }

    /// Reads the room on its queue, in order with its changes; `room_not_found` once the room
    /// has ended, `conflict` when this node no longer hosts it.
    func read<T: Sendable>(_ body: @escaping @Sendable (RoomEngine, Int64) -> T, then: @escaping @Sendable (Result<T, ProtocolError>) -> Void) {
        queue.async { [self] in
            guard !ended else { return then(.failure(ProtocolError(.roomNotFound, "room \(id) has ended"))) }
            if let refusal = leaseRefusal() { return then(.failure(refusal)) }
            if unloaded, let current = try? context.rooms.host(id, context: context) {
                current.read(body, then: then)
                return
            }
            then(.success(body(engine, context.now())))
        }
    }

    /// In a cluster, why this node may no longer answer for the room (nil: it may): its lease
    /// lapsed while the node was paused and another node holds the room now. The room is given
    /// up here at once, so nothing queued behind is answered from it either.
    private func leaseRefusal() -> ProtocolError? {
        assertOnQueue()
        guard fence != nil, !unloaded, let refusal = context.leases?.confirm(id) else { return nil }
        giveUp()
        return refusal
    }

    /// Members in the room now (updated after each change).
    var memberCount: Int { members.load(ordering: .relaxed) }
    /// Seats taken now (updated after each change).
    var seatedCount: Int { seated.load(ordering: .relaxed) }

    /// The member's connection dropped: keep membership through the resume grace.
    func disconnect(_ user: String) {
        queue.async { [self] in
            engine.disconnect(user, now: context.now())
            updateDeadline()
        }
    }

    /// The member is back.
    func reconnect(_ user: String) {
        queue.async { [self] in
            engine.reconnect(user)
            updateDeadline()
        }
    }

    /// The member is gone for good (`bye`).
    func drop(_ user: String, reason: String) {
        queue.async { [self] in
            guard !ended else { return }
            let seatsBefore = webhooksOn ? engine.seats : []
            let outcome = engine.drop(user, reason: reason, now: context.now())
            persistOrLog(outcome, seatsBefore: seatsBefore)
            finish(outcome)
        }
    }

    /// Ends the room from outside the protocol (shutdown tooling, admin API).
    func terminate(reason: String) {
        queue.async { [self] in
            guard !ended else { return }
            let seatsBefore = webhooksOn ? engine.seats : []
            let outcome = engine.terminate(reason: reason)
            persistOrLog(outcome, seatsBefore: seatsBefore)
            finish(outcome)
        }
    }

    /// Runs the room's timers if one is due.
    func tickIfDue(now: Int64) {
        guard let due = deadline.withLock({ $0 }), due <= now else { return }
        queue.async { [self] in
            guard !ended else { return }
            let seatsBefore = webhooksOn ? engine.seats : []
            let outcome = engine.tick(now: context.now())
            persistOrLog(outcome, seatsBefore: seatsBefore)
            finish(outcome)
        }
    }

    /// Leaves memory if the room has been empty, with nothing pending, for `idleMilliseconds`;
    /// everything that matters is in the store.
    func unloadIfIdle(now: Int64, idleMilliseconds: Int64) {
        queue.async { [self] in
            guard !ended, !unloaded, let since = emptySince, now - since >= idleMilliseconds, engine.memberIds.isEmpty,
                engine.nextDeadline == nil
            else { return }
            unloaded = true
            context.rooms.remove(id, host: self)
            context.leases?.release(id)
        }
    }

    /// Stops serving the room: another node holds it now, or (`handOver`: this node drains)
    /// this node gives its lease back for another to take, once everything queued before has
    /// run. Requests that still reach this host go to the registry (which answers where the
    /// room is); members are disconnected, to connect again (1001, as a server stopping does)
    /// and find it on its next node. Nothing is written: what is stored (seats included) is what
    /// the next node opens.
    func relinquish(handOver: Bool = false) {
        queue.async { [self] in
            guard !ended, !unloaded else { return }
            if handOver { context.leases?.release(id) }
            giveUp()
        }
    }

    /// Stops serving the room here (queue only): out of the registry, its members' media let go
    /// and their connections closed with 1001, so they reconnect to the room where it is now.
    private func giveUp() {
        assertOnQueue()
        unloaded = true
        // Closed before the room leaves this node's registry: a frame of theirs read from now
        // on is not carried out (it would be relayed to the room's new node), so what they sent
        // while this node was paused is not done behind their backs.
        let members = engine.memberIds
        for connection in context.presence.connections(of: members) {
            connection.close(code: CloseCode.goingAway.rawValue, reason: "room \(id) moved to another node")
        }
        context.rooms.remove(id, host: self)
        for user in members {
            context.media.leave(room: id, user: user)
            _ = context.presence.left(user, room: id)
        }
    }

    /// Sends an ephemeral event (no seq) to every member.
    func broadcast(_ event: ServerEvent) {
        queue.async { [self] in
            guard !ended else { return }
            let frame = WireEncoder.event(EventFrame(room: id, seq: nil, event: event))
            WebSocketConnection.send(frame, to: roomConnections(), urgent: false)
        }
    }

    /// Tells each member how well its network carries audio (`network.quality`), and the whole
    /// room how a seated member's does. A listener's quality matters to the listener alone:
    /// sent to everyone, a room's reports would grow with the square of its size (2,000 members
    /// with voice: two million writes a second).
    func reportQuality(_ qualities: [MemberQuality]) {
        queue.async { [self] in
            guard !ended else { return }
            let seated = Set(engine.seats.compactMap(\.user))
            for quality in qualities where engine.isMember(quality.user) {
                let event = ServerEvent.networkQuality(user: quality.user, up: quality.up, down: quality.down)
                let connections = seated.contains(quality.user) ? roomConnections() : context.presence.connections(of: [quality.user])
                WebSocketConnection.send(WireEncoder.event(EventFrame(room: id, seq: nil, event: event)), to: connections, urgent: false)
            }
        }
    }

    /// Waits until everything queued so far has run.
    func drain() { queue.sync {} }

    // MARK: On the queue

    private var webhooksOn: Bool { context.webhooks != nil }

    /// Checks (in debug builds) that the caller runs on the room's queue, as everything that
    /// touches `engine` must.
    private func assertOnQueue() {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(queue))
        #endif
    }

    /// Writes what the outcome asks of the store, from `state` (the engine as it will be), and
    /// the webhook events it caused, in one transaction.
    private func persist(_ outcome: RoomOutcome, of state: RoomEngine, seatsBefore: [Seat], joined: Member? = nil, unbanned: String? = nil) throws {
        assertOnQueue()
        var events: [WebhookEvent] = []
        if webhooksOn {
            events = RoomWebhooks.events(
                .init(
                    room: id, now: context.now(), joined: joined, seatsBefore: seatsBefore, seatsAfter: state.seats, outcome: outcome,
                    unbanned: unbanned), includeChat: context.config.webhooks.includeChat)
        }
        let stores = outcome.effects.contains { if case .memberRemoved = $0 { false } else { true } }
        guard stores || !events.isEmpty else { return }
        try context.store.commit(room: id, effects: outcome.effects, state: state.stored, events: events, endpoints: context.webhookEndpoints, fence: fence)
        if !events.isEmpty { context.webhooks?.poke() }
    }

    /// `persist` for a change already made in memory (it cannot be taken back): a failed write
    /// is logged, and lost webhook events are counted.
    private func persistOrLog(_ outcome: RoomOutcome, seatsBefore: [Seat], joined: Member? = nil) {
        do {
            try persist(outcome, of: engine, seatsBefore: seatsBefore, joined: joined)
        } catch {
            context.logger.log(.error, "room \(id): store failed: \(error)", event: "store.error", fields: ["room": id, "error": "\(error)"])
            if webhooksOn { context.metrics.count(.webhooksLost) }
            if error is Store.Fenced { context.leases?.fenced(id) }
        }
    }

    private func logRejectedJoin(_ user: String, _ body: Data) {
        let code = ServerMetrics.result(ok: false, body: body)
        context.logger.log(.info, "room \(id): \(user) may not join (\(code))", event: "join.rejected", fields: ["room": id, "user": user, "code": code])
    }

    /// The user a successful `member.unban` lifted.
    private static func unbanned(_ command: RoomCommand, _ outcome: RoomOutcome) -> String? {
        if case .unban(let user) = command, outcome.effects.contains(.saveBan(user: user, until: 0)) { return user }
        return nil
    }

    /// Answers a browser's SDP offer (`webrtc.offer`): the answer, and which track is which seat.
    private func negotiate(_ sdp: String, seats: Int, user: String) -> (ok: Bool, body: Data) {
        struct Answer: Encodable {
            var sdp: String
            var tracks: [WebRTCAnswer.Track]
            var uplink: String?
        }
        let offer: WebRTCOffer
        do {
            // One section for the microphone and one per seat is all a member can use.
            offer = try WebRTCOffer(
                admitting: sdp, op: "webrtc.offer", mostSections: seats + 1, why: "this room takes at most \(seats + 1) (the microphone and one per seat)")
        } catch {
            return (false, WireEncoder.encode(error))
        }
        guard let answer = context.media.negotiate(room: id, user: user, offer: offer, seats: seats) else {
            return (false, WireEncoder.encode(ProtocolError(.internal, "WebRTC media is not available on this server")))
        }
        return (true, WireEncoder.encode(Answer(sdp: answer.sdp, tracks: answer.tracks, uplink: answer.uplink)))
    }

    /// Tells the media router who may be heard now.
    private func applySpeakingRights() {
        assertOnQueue()
        var seats: [String: Int] = [:]
        for seat in engine.seats {
            if let user = seat.user, engine.mayPublish(user) { seats[user] = seat.index }
        }
        context.media.setSpeakers(room: id, seats: seats)
    }

    /// Sends the events, then updates presence (and closes kicked connections) and deadlines.
    private func finish(_ outcome: RoomOutcome, since: UInt64? = nil) {
        assertOnQueue()
        // Speaking rights change before anyone hears of the change that caused it.
        applySpeakingRights()
        let removed = outcome.effects.compactMap { effect -> String? in
            if case .memberRemoved(let user, _, _) = effect { return user }
            return nil
        }
        for delivery in outcome.deliveries {
            let connections: [WebSocketConnection]
            if case .room = delivery.audience, removed.isEmpty {
                connections = roomConnections()
            } else {
                let users = recipients(delivery.audience, alsoRemoved: removed)
                guard !users.isEmpty else { continue }
                connections = context.presence.connections(of: users)
            }
            guard !connections.isEmpty else { continue }
            var event = delivery.event
            if case .seatUpdated(let seats) = event { event = .seatUpdated(withSSRCs(seats)) }
            let frame = WireEncoder.event(EventFrame(room: id, seq: delivery.seq, event: event))
            WebSocketConnection.send(frame, to: connections, urgent: false, since: since)
        }
        for delivery in outcome.deliveries {
            if case .youKicked(let by, let until) = delivery.event, case .user(let user) = delivery.audience {
                var fields = ["room": id, "user": user, "by": by]
                if let until { fields["until"] = String(until) }
                context.logger.log(
                    .info, "room \(id): \(user) removed by \(by)" + (until.map { ", banned until \($0)" } ?? ""),
                    event: until == nil ? "member.kicked" : "member.banned", fields: fields)
            }
        }
        for effect in outcome.effects {
            switch effect {
            case .storeChat: context.metrics.count(.chatMessages)
            case .saveBan(_, let until) where until > 0: context.metrics.count(.bans)
            case .memberRemoved(_, true, _): context.metrics.count(.kicks)
            default: break
            }
        }
        for effect in outcome.effects {
            switch effect {
            case .memberRemoved(let user, let kicked, _):
                context.media.leave(room: id, user: user)
                let (session, remaining) = context.presence.left(user, room: id)
                if kicked, remaining == 0, let session {
                    session.connection.close(code: CloseCode.kicked.rawValue, reason: "kicked from room \(id)")
                }
            case .deleteRoom:
                ended = true
                context.rooms.remove(id, host: self)
                context.leases?.release(id)
            default:
                break
            }
        }
        updateDeadline()
    }

    /// The connections of every member: the list made for the last broadcast while no one has
    /// joined, left or changed connection since (a broadcast to thousands then looks up no one).
    private func roomConnections() -> [WebSocketConnection] {
        assertOnQueue()
        let members = engine.memberIds
        let cached = audience.flatMap { $0.members == members ? $0 : nil }
        let (found, generation) = context.presence.connections(of: members, unlessStillAt: cached?.generation)
        if let found {
            audience = (members, generation, found)
            return found
        }
        return cached!.connections
    }

    private func recipients(_ audience: Audience, alsoRemoved removed: [String]) -> [String] {
        switch audience {
        case .room: return engine.memberIds + removed
        case .roomExcept(let user): return (engine.memberIds + removed).filter { $0 != user }
        case .user(let user): return [user]
        case .users(let users): return users
        case .moderators: return engine.moderatorIds
        }
    }

    private func updateDeadline() {
        assertOnQueue()
        let next = engine.nextDeadline
        deadline.withLock { $0 = next }
        members.store(engine.memberIds.count, ordering: .relaxed)
        seated.store(engine.seats.lazy.filter { $0.user != nil }.count, ordering: .relaxed)
        if engine.memberIds.isEmpty {
            if emptySince == nil { emptySince = context.now() }
        } else {
            emptySince = nil
        }
        if !ended { context.rooms.sweep(id, host: self, needed: next != nil || emptySince != nil) }
    }

    /// Seats with the SSRC of whoever sits there.
    private func withSSRCs(_ seats: [Seat]) -> [Seat] {
        let ssrcs = context.media.ssrcs(room: id, users: seats.compactMap(\.user))
        return seats.map { seat in
            var seat = seat
            seat.ssrc = seat.user.flatMap { ssrcs[$0] }
            return seat
        }
    }
}
