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
    // Unchecked: the engine and what goes with it belong to `queue` (`QueueOwned` checks every
    // use); everything else is a constant, a Mutex or an Atomic.
    let id: String
    let queue: DispatchQueue
    @QueueOwned var engine: RoomEngine
    @QueueOwned var ended: Bool
    /// Unloaded while idle: requests that still reach this host go to the registry's new one.
    @QueueOwned var unloaded: Bool
    /// When the room last became empty (nil while it has members).
    @QueueOwned var emptySince: Int64?
    /// The members' connections as last looked up, for broadcasts to the whole room: valid while
    /// the member list and the presence generation are the ones it was made from.
    @QueueOwned var audience: (members: [String], generation: UInt64, connections: [WebSocketConnection])?
    let context: ServerContext
    private let deadline = Mutex<Int64?>(nil)
    private let members = Atomic<Int>(0)
    private let seated = Atomic<Int>(0)
    /// In a cluster, the fence this node took for the room: every write carries it.
    private let fence: Int64?
    /// Renders answers and the seats' SSRCs.
    let replies: RoomReplies

    init(engine: RoomEngine, fence: Int64? = nil, context: ServerContext) {
        let queue = DispatchQueue(label: "majlis.room.\(engine.id)")
        self.id = engine.id
        self.queue = queue
        self.fence = fence
        self.context = context
        _engine = QueueOwned(wrappedValue: engine, queue: queue)
        _ended = QueueOwned(wrappedValue: false, queue: queue)
        _unloaded = QueueOwned(wrappedValue: false, queue: queue)
        _emptySince = QueueOwned(wrappedValue: engine.memberIds.isEmpty ? context.now() : nil, queue: queue)
        _audience = QueueOwned(wrappedValue: nil, queue: queue)
        replies = RoomReplies(room: engine.id, context: context)
        members.store(engine.memberIds.count, ordering: .relaxed)
    }

    /// How an answer is handed back: success and its data, or failure and the encoded error.
    typealias Answer = @Sendable (_ ok: Bool, _ body: Data) -> Void

    /// Applies a client's request and answers it on its session.
    /// `receivedAt`: when the request arrived (monotonic ns); the answer and the events it causes
    /// count their write delay from then.
    func perform(re: Int64, op: String, rid: String?, command: RoomCommand, session: Session, caller: Caller, receivedAt: UInt64? = nil) {
        perform(command, op: op, caller: caller, rid: rid, device: session.device, receivedAt: receivedAt) { [context] ok, body in
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
    /// room's call for another's). `op` names the command in metrics; `device` is the device a
    /// member's session is on (the room's events go there from its join on).
    func perform(
        _ command: RoomCommand, op: String, caller: Caller, rid: String?, ridOwner: String? = nil, device: String = "", receivedAt: UInt64? = nil,
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
                    current.perform(command, op: op, caller: caller, rid: rid, ridOwner: ridOwner, device: device, receivedAt: receivedAt, answer: reply)
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
            let ridSince = now - Duration.seconds(context.config.ridLifetime).milliseconds
            if let replyKey, let remembered = try? context.store.rememberedReply(user: replyKey.owner, rid: replyKey.rid, since: ridSince) {
                answer(remembered.ok, remembered.body)
                return
            }
            // What the op comes to (`RoomStep`), then what it asks done: the store first for a
            // change the store must hold, with the webhook events it caused in the same transaction.
            let step = RoomStep(command, from: caller, on: &engine, now: now, webhooks: webhooks)
            if let receiver = step.handover, let refusal = ownsTooMany(receiver) {
                answer(false, WireEncoder.encode(refusal))
                return
            }
            let failure = keep(step)
            let outcome = failure == nil ? step.outcome : RoomOutcome()
            let (ok, body) =
                failure.map { (false, WireEncoder.encode($0)) } ?? replies.answer(outcome.reply, to: command, from: caller, member: engine.isMember(caller.id))
            if let replyKey, failure == nil {
                try? context.store.rememberReply(user: replyKey.owner, rid: replyKey.rid, reply: Store.RememberedReply(ok: ok, body: body, at: now))
            }
            if ok, !caller.isOperator, case .join = command, case .success(.snapshot) = outcome.reply, let elsewhere = context.presence.joined(caller.id, room: id, device: device) {
                elsewhere.send(WireEncoder.event(EventFrame(room: id, seq: nil, event: .youElsewhere)))
            }
            if !ok, case .join = command { logRejectedJoin(caller.id, body) }
            applySpeakingRights()  // before the caller hears its change went through
            answer(ok, body)
            finish(outcome, since: receivedAt)
        }
    }

    /// Does what `step` asks of the store and the engine. A change the store must hold first is
    /// kept only once committed: when the commit fails, nothing changed and the error says why.
    private func keep(_ step: RoomStep) -> ProtocolError? {
        guard let next = step.storeFirst else {
            if let write = step.write { commitOrLog(write) }
            return nil
        }
        do {
            if let write = step.write { try commit(write) }
            engine = next
            return nil
        } catch {
            return storeFailed(error)
        }
    }

    /// A room handed over counts against the receiver's rooms, as one it created would; asked
    /// once the engine has allowed the handover, so a caller who may not make it hears why.
    private func ownsTooMany(_ receiver: String) -> ProtocolError? {
        guard let owned = try? context.store.roomCount(ownedBy: receiver), owned >= context.config.maxRoomsPerUser else { return nil }
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
            let seatsBefore = webhooks.on ? engine.seats : []
            let outcome = engine.drop(user, reason: reason, now: context.now())
            if let write = RoomWrite(room: id, outcome: outcome, after: engine, seatsBefore: seatsBefore, now: context.now(), webhooks: webhooks) {
                commitOrLog(write)
            }
            finish(outcome)
        }
    }

    /// Ends the room from outside the protocol (shutdown tooling, admin API).
    func terminate(reason: String) {
        queue.async { [self] in
            guard !ended else { return }
            let seatsBefore = webhooks.on ? engine.seats : []
            let outcome = engine.terminate(reason: reason)
            if let write = RoomWrite(room: id, outcome: outcome, after: engine, seatsBefore: seatsBefore, now: context.now(), webhooks: webhooks) {
                commitOrLog(write)
            }
            finish(outcome)
        }
    }

    /// Runs the room's timers if one is due.
    func tickIfDue(now: Int64) {
        guard let due = deadline.withLock({ $0 }), due <= now else { return }
        queue.async { [self] in
            guard !ended else { return }
            let seatsBefore = webhooks.on ? engine.seats : []
            let outcome = engine.tick(now: context.now())
            if let write = RoomWrite(room: id, outcome: outcome, after: engine, seatsBefore: seatsBefore, now: context.now(), webhooks: webhooks) {
                commitOrLog(write)
            }
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
        unloaded = true
        // Closed before the room leaves this node's registry: a frame of theirs read from now
        // on is not carried out (it would be relayed to the room's new node), so what they sent
        // while this node was paused is not done behind their backs.
        let members = engine.memberIds
        for connection in context.presence.connections(of: members, in: id) {
            connection.close(code: CloseCode.goingAway.rawValue, reason: "room \(id) moved to another node")
        }
        context.rooms.remove(id, host: self)
        for user in members {
            context.media.leave(room: id, user: user)
            _ = context.presence.left(user, room: id)
        }
    }

    /// Waits until everything queued so far has run.
    func drain() { queue.sync {} }

    // MARK: On the queue

    /// Whether the room's changes are written with their webhook events.
    private var webhooks: RoomWrite.Webhooks { .init(on: context.webhooks != nil, includeChat: context.config.webhooks.includeChat) }

    /// Commits `write`, with the lease's fence in a cluster.
    private func commit(_ write: RoomWrite) throws {
        try context.store.commit(room: id, effects: write.effects, state: write.state, events: write.events, endpoints: context.webhookEndpoints, fence: fence)
        if !write.events.isEmpty { context.webhooks?.poke() }
    }

    /// `commit` for a change already made in memory (it cannot be taken back): a failed write
    /// is logged, and lost webhook events are counted.
    private func commitOrLog(_ write: RoomWrite) {
        do {
            try commit(write)
        } catch {
            _ = storeFailed(error)
            if !write.events.isEmpty { context.metrics.count(.webhooksLost) }
        }
    }

    /// Logs a failed write (a fenced one tells the leases this node lost the room) and says so.
    private func storeFailed(_ error: any Error) -> ProtocolError {
        context.logger.log(.error, "room \(id): store failed: \(error)", event: "store.error", fields: ["room": id, "error": "\(error)"])
        if error is Store.Fenced { context.leases?.fenced(id) }
        return ProtocolError(.internal, "the server could not store the change")
    }

    private func logRejectedJoin(_ user: String, _ body: Data) {
        let code = ServerMetrics.result(ok: false, body: body)
        context.logger.log(.info, "room \(id): \(user) may not join (\(code))", event: "join.rejected", fields: ["room": id, "user": user, "code": code])
    }

    /// Publishes the room's counts and next deadline, and whether the sweeper visits it.
    func updateDeadline() {
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
}
