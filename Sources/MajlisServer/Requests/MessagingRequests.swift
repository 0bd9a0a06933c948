import Foundation
import MajlisProtocol
import MajlisRoom
import MajlisTransport

/// The messaging ops (docs/protocol.md section 17): each one reads what `ConversationRules`
/// needs from the store, asks the rules, writes, answers, and then tells the members' sessions,
/// on every device, what changed. They run one at a time on a queue of their own (the store is
/// never read on the service thread), so a session's ops are carried out in the order it sent them.
final class MessagingRequests: Sendable {
    let context: ServerContext
    let rules: ConversationRules
    let queue = DispatchQueue(label: "majlis.messaging")
    /// How long a `msg.typing` holds (ms): clients say it again every few seconds while typing.
    static let typingFor: Int64 = 6_000

    init(context: ServerContext, rules: ConversationRules) {
        self.context = context
        self.rules = rules
    }

    /// What an op comes to: its answer's data, and the events to send once it is answered.
    struct Outcome {
        var data: Data
        var events: [Delivery] = []
    }

    /// An event for the sessions of `users` (every device), but the one that made the request.
    struct Delivery {
        var users: [String]
        var event: ServerEvent
    }

    /// Carries out `command` for `caller`, answers it on `session`, then sends its events.
    /// A `rid` gets the first answer again within its lifetime, as for room ops.
    func handle(_ command: MessagingCommand, request: IncomingRequest, session: Session, caller: Caller, receivedAt: UInt64) {
        queue.async { [self] in
            let now = context.now()
            let (ok, body, events) = answer(command, request: request, caller: caller, now: now)
            let frame = WireEncoder.response(re: request.id, ok: ok, body: body)
            session.state.withLock { $0.chargeAnswer(frame.count, now: now) }
            session.send(frame, since: receivedAt)
            context.metrics.recordOp(request.op, result: ServerMetrics.result(ok: ok, body: body), since: receivedAt)
            deliver(events, except: session)
        }
    }

    /// Sends each delivery's event to every session of its users (but `except`), on this node
    /// and, through the messaging bus, on the cluster's others.
    func deliver(_ deliveries: [Delivery], except session: Session? = nil) {
        for delivery in deliveries {
            let event = WireEncoder.event(EventFrame(room: nil, seq: nil, event: delivery.event))
            let connections = context.presence.sessions(of: delivery.users).compactMap { $0 === session ? nil : $0.connection }
            WebSocketConnection.send(event, to: connections, urgent: false)
            context.messagingBus?.publish(users: delivery.users, frame: event)
        }
    }

    /// Returns once every op queued before it is carried out.
    func finish() {
        queue.sync {}
    }

    /// Runs `work` (the server API's) on the messaging queue, after every op queued before it;
    /// answers `done` with its data, then sends its events.
    func perform(_ work: @escaping @Sendable (Int64) throws -> Outcome, done: @escaping @Sendable (Result<Data, any Error>) -> Void) {
        queue.async { [self] in
            do {
                let outcome = try work(context.now())
                done(.success(outcome.data))
                deliver(outcome.events)
            } catch {
                done(.failure(error))
            }
        }
    }

    /// The answer to `command` (the remembered one for a `rid` seen before) and its events.
    private func answer(_ command: MessagingCommand, request: IncomingRequest, caller: Caller, now: Int64) -> (ok: Bool, body: Data, events: [Delivery]) {
        let replyKey = request.rid.map { (owner: "member:" + caller.id, rid: "\(command.conversation ?? "-") \(request.op) \($0)") }
        let ridSince = now - Duration.seconds(context.config.ridLifetime).milliseconds
        if let replyKey, let remembered = try? context.store.rememberedReply(user: replyKey.owner, rid: replyKey.rid, since: ridSince) {
            return (remembered.ok, remembered.body, [])
        }
        let result: (ok: Bool, body: Data, events: [Delivery])
        do {
            let outcome = try carryOut(command, caller: caller, now: now)
            result = (true, outcome.data, outcome.events)
        } catch let error as ProtocolError {
            result = (false, WireEncoder.encode(error), [])
        } catch {
            // A failure of the store is not remembered: a retry is carried out afresh.
            context.logger.log(.error, "\(request.op) by \(caller.id) failed: \(error)", event: "messaging.failed", fields: ["op": request.op, "user": caller.id])
            return (false, WireEncoder.encode(ProtocolError(.internal, "the server could not store or read that; nothing changed")), [])
        }
        if let replyKey {
            try? context.store.rememberReply(user: replyKey.owner, rid: replyKey.rid, reply: Store.RememberedReply(ok: result.ok, body: result.body, at: now))
        }
        return result
    }

    /// What the rules need to know of the store to judge `command`.
    private func facts(_ command: MessagingCommand, caller: Caller) throws -> ConversationRules.Facts {
        let store = context.store
        var facts = ConversationRules.Facts()
        if let id = command.conversation {
            facts.caller = try store.membership(id, user: caller.id)
            switch command {
            case .remove(_, let user), .setRole(_, let user, _), .muteMember(_, let user, _): facts.target = try store.membership(id, user: user)
            case .edit(_, let seq, _), .revoke(_, let seq), .report(_, let seq, _), .feature(_, let seq, _): facts.message = try store.message(seq, in: id)
            case .join: facts.group = try store.conversationInfo(id)
            case .answerRequest(_, let user, _):
                facts.target = try store.membership(id, user: user)
                facts.requested = try store.joinRequests(of: id).contains { $0.user == user }
                facts.members = try store.memberCount(of: id)
            case .invite(_, let users):
                facts.members = try store.memberCount(of: id)
                facts.newcomers = try users.filter { try store.membership(id, user: $0) == nil }.count
            case .send, .typing:
                if facts.caller?.kind == .direct, let peer = try store.peer(in: id, of: caller.id) {
                    facts.peer = peer
                    facts.acquaintance = try store.acquaintance(of: caller.id, with: peer, direct: id)
                }
            default: break
            }
        }
        if case .send(.user(let user), _) = command, user != caller.id {
            facts.peer = user
            facts.acquaintance = try store.acquaintance(of: caller.id, with: user, direct: ConversationRules.directId(caller.id, user))
        }
        return facts
    }

    private func carryOut(_ command: MessagingCommand, caller: Caller, now: Int64) throws -> Outcome {
        let store = context.store
        let facts = try facts(command, caller: caller)
        if let refusal = rules.refusal(command, by: caller.id, facts: facts, now: now) { throw refusal }
        switch command {
        case .createGroup(let title, let members, let access, let about):
            let id = "g-" + HMACSHA256.randomBytes(12).map { String(format: "%02x", $0) }.joined()
            let invited = members.filter { $0 != caller.id }
            try store.createGroup(id, title: title, owner: caller.id, members: invited, access: access, about: about, now: now)
            let everyone = [caller.id] + invited
            let change = ConversationChange(
                conversation: id, by: caller.id, kind: .group, title: title, joined: everyone, memberCount: everyone.count, owner: caller.id, about: about,
                access: access)
            return Outcome(data: WireEncoder.encode(["conversation": try summary(id, for: caller.id)]), events: [Delivery(users: everyone, event: .conversationUpdated(change))])
        case .list(let after, let limit):
            struct Page: Encodable {
                var conversations: [ConversationSummary]
                var more: Bool
                var unread: Int64
            }
            let found = try store.conversations(of: caller.id, after: after, limit: limit + 1)
            let page = Page(conversations: Array(found.prefix(limit)), more: found.count > limit, unread: try store.totalUnread(of: caller.id))
            return Outcome(data: WireEncoder.encode(page))
        case .get(let id):
            struct Details: Encodable {
                var conversation: ConversationSummary
                var members: [ConversationMember]
                var featured: [ConversationMessage]?
            }
            let conversation = try summary(id, for: caller.id)
            let featured = conversation.kind == .group ? try store.featuredMessages(in: id) : nil
            return Outcome(data: WireEncoder.encode(Details(conversation: conversation, members: try store.members(of: id), featured: featured)))
        case .invite(let id, let users):
            let added = try store.addMembers(id, users: users, now: now)
            guard !added.isEmpty else { return Outcome(data: WireEncoder.encode(["added": [String]()])) }
            let members = try store.memberIds(of: id)
            let title = try store.conversation(id, for: caller.id)?.title
            let change = ConversationChange(conversation: id, by: caller.id, kind: .group, title: title, joined: added, memberCount: members.count)
            return Outcome(data: WireEncoder.encode(["added": added]), events: [Delivery(users: members, event: .conversationUpdated(change))])
        case .remove(let id, let user):
            try store.removeMember(id, user: user)
            let members = try store.memberIds(of: id)
            return Outcome(data: WireEncoder.encode(EmptyData()), events: [
                Delivery(users: [user], event: .conversationRemoved(conversation: id, by: caller.id, reason: "removed")),
                Delivery(users: members, event: .conversationUpdated(ConversationChange(conversation: id, by: caller.id, left: [user], memberCount: members.count))),
            ])
        case .leave(let id):
            return Outcome(data: WireEncoder.encode(EmptyData()), events: try leave(id, caller: caller.id, role: facts.caller?.role ?? .member))
        case .update(let id, let title, let about, let access):
            try store.updateGroup(id, title: title, about: about, access: access)
            let change = ConversationChange(conversation: id, by: caller.id, title: title, about: about, access: access)
            return Outcome(data: WireEncoder.encode(EmptyData()), events: [Delivery(users: try store.memberIds(of: id), event: .conversationUpdated(change))])
        case .discover(let query, let cursor, let limit):
            struct Found: Encodable {
                var groups: [PublicGroup]
                var more: Bool
                var next: String?
            }
            let offset = try cursor.map { text in
                guard let offset = Int(text), offset >= 0 else { throw ProtocolError(.badRequest, "args.cursor is not one this server gave") }
                return offset
            } ?? 0
            let found = try store.publicGroups(matching: query, offset: offset, limit: limit + 1)
            let more = found.count > limit
            return Outcome(data: WireEncoder.encode(Found(groups: Array(found.prefix(limit)), more: more, next: more ? String(offset + limit) : nil)))
        case .join(let id, let note):
            return try join(id, note: note, caller: caller, member: facts.caller != nil, access: facts.group?.access ?? .private, now: now)
        case .requests(let id):
            return Outcome(data: WireEncoder.encode(["requests": try store.joinRequests(of: id)]))
        case .answerRequest(let id, let user, let accept):
            try store.removeJoinRequest(id, user: user)
            guard accept else {
                return Outcome(data: WireEncoder.encode(EmptyData()), events: [Delivery(users: [user], event: .joinDeclined(conversation: id, by: caller.id))])
            }
            return try admit(user, to: id, by: caller.id, now: now, answer: WireEncoder.encode(EmptyData()))
        case .muteMember(let id, let user, let seconds):
            let until = seconds == 0 ? 0 : now + Int64(seconds) * 1_000
            try store.muteMember(id, user: user, until: until)
            let change = ConversationChange(conversation: id, by: caller.id, user: user, mutedUntil: until)
            return Outcome(data: WireEncoder.encode(["mutedUntil": until]), events: [Delivery(users: try store.memberIds(of: id), event: .conversationUpdated(change))])
        case .feature(let id, let seq, let featured):
            guard (facts.message?.featuredAt != nil) != featured else { return Outcome(data: WireEncoder.encode(EmptyData())) }
            try store.feature(seq, in: id, at: featured ? now : nil)
            return try updated(seq, in: id)
        case .setRole(let id, let user, let role):
            try store.setRole(id, user: user, role: role)
            let change = ConversationChange(conversation: id, by: caller.id, user: user, role: role)
            return Outcome(data: WireEncoder.encode(EmptyData()), events: [Delivery(users: try store.memberIds(of: id), event: .conversationUpdated(change))])
        case .settings(let id, let muted, let pinned):
            try store.setSettings(id, user: caller.id, muted: muted, pinned: pinned)
            let change = ConversationChange(conversation: id, by: caller.id, muted: muted, pinned: pinned)
            return Outcome(data: WireEncoder.encode(EmptyData()), events: [Delivery(users: [caller.id], event: .conversationUpdated(change))])
        case .send(let target, let draft) where rules.holds(command, facts: facts):
            return try hold(try media(draft, from: caller), to: target, caller: caller, peer: facts.peer ?? "", now: now)
        case .send(let target, let draft):
            return try send(try media(draft, from: caller), to: target, caller: caller, now: now)
        case .sync(let id, let after, let limit):
            struct Page: Encodable {
                var messages: [ConversationMessage]
                var more: Bool
            }
            let found = try store.messages(in: id, after: after, limit: limit + 1)
            return Outcome(data: WireEncoder.encode(Page(messages: Array(found.prefix(limit)), more: found.count > limit)))
        case .search(let query, let id, let cursor, let limit):
            struct Found: Encodable {
                var messages: [ConversationMessage]
                var more: Bool
                var next: String?
            }
            let after = try cursor.map { text in
                guard let position = Store.SearchPosition(text) else { throw ProtocolError(.badRequest, "args.cursor is not one this server gave") }
                return position
            }
            let found = try store.search(query, for: caller.id, in: id, after: after, limit: limit + 1)
            let page = Array(found.prefix(limit))
            let next = found.count > limit ? page.last.map { Store.SearchPosition($0).description } : nil
            return Outcome(data: WireEncoder.encode(Found(messages: page, more: next != nil, next: next)))
        case .read(let id, let seq):
            guard let mark = try store.markRead(id, user: caller.id, seq: seq) else {
                return Outcome(data: WireEncoder.encode(["readSeq": try store.membership(id, user: caller.id)?.readSeq ?? 0]))
            }
            let event = ServerEvent.messageRead(conversation: id, user: caller.id, seq: mark)
            return Outcome(data: WireEncoder.encode(["readSeq": mark]), events: [Delivery(users: try audience(id, kind: facts.caller?.kind, caller: caller.id), event: event)])
        case .report(let id, _, let reason):
            guard let message = facts.message else { return Outcome(data: WireEncoder.encode(EmptyData())) }
            let data: JSONValue = ["message": Self.json(message), "by": .string(caller.id), "reason": .string(reason)]
            if context.webhookEndpoints.isEmpty {
                context.logger.log(
                    .warning, "\(caller.id) reported message \(message.seq) of \(id), and no webhook takes reports", event: "message.reported",
                    fields: ["conversation": id, "seq": String(message.seq), "by": caller.id])
            }
            try store.enqueueWebhooks([WebhookEvent(type: "message.reported", conversation: id, time: now, data: data)], endpoints: context.webhookEndpoints)
            return Outcome(data: WireEncoder.encode(EmptyData()))
        case .block(let user):
            try store.block(user, by: caller.id, now: now)
            return Outcome(data: WireEncoder.encode(EmptyData()))
        case .unblock(let user):
            try store.unblock(user, by: caller.id)
            return Outcome(data: WireEncoder.encode(EmptyData()))
        case .listBlocks:
            return Outcome(data: WireEncoder.encode(["users": try store.blocked(by: caller.id)]))
        case .presence(let users):
            return Outcome(data: WireEncoder.encode(["presence": try store.presence(of: users, seenBy: caller.id)]))
        case .sharePresence(let sharing):
            return try share(sharing, caller: caller.id, now: now)
        case .deliverLog(let id, let media):
            guard try store.logRequest(id)?.user == caller.id else { throw ProtocolError(.requestNotFound, "no log request \(id) of yours") }
            guard let upload = try store.upload(media), upload.owner == caller.id, upload.isComplete else {
                throw ProtocolError(.badRequest, "args.media must be a finished upload of yours (/v1/uploads)")
            }
            guard upload.mime == LogRequest.type else { throw ProtocolError(.badRequest, "a log is \(LogRequest.type), not \(upload.mime)") }
            _ = try store.deliverLog(id, of: caller.id, media: media, now: now)
            context.logger.log(.info, "log \(id) delivered by \(caller.id)", event: "log.delivered", fields: ["id": id, "user": caller.id, "media": media])
            return Outcome(data: WireEncoder.encode(EmptyData()))
        case .edit(let id, let seq, let text):
            try store.editMessage(seq, in: id, text: text, now: now)
            return try updated(seq, in: id)
        case .revoke(let id, let seq):
            guard facts.message?.revokedBy == nil else { return Outcome(data: WireEncoder.encode(EmptyData())) }
            try store.revokeMessage(seq, in: id, by: caller.id)
            return try updated(seq, in: id)
        case .typing(let id):
            let event = ServerEvent.typing(conversation: id, user: caller.id, until: now + Self.typingFor)
            let others = try audience(id, kind: facts.caller?.kind, caller: caller.id).filter { $0 != caller.id }
            return Outcome(data: WireEncoder.encode(["until": now + Self.typingFor]), events: [Delivery(users: others, event: event)])
        }
    }

    /// A message edited or revoked: `msg.updated` with it as it is now, for every member.
    func updated(_ seq: Int64, in id: String) throws -> Outcome {
        guard let message = try context.store.message(seq, in: id) else { throw ProtocolError(.badRequest, "conversation \(id) has no message \(seq)") }
        return Outcome(data: WireEncoder.encode(EmptyData()), events: [Delivery(users: try context.store.memberIds(of: id), event: .messageUpdated(message))])
    }

    /// `msg.send`: the message stored (once per `clientMsgId`), and for every member's devices.
    /// A media message's draft with what its upload says (`MediaMessage`); any other as it is.
    private func media(_ draft: MessageDraft, from caller: Caller) throws -> MessageDraft {
        try MediaMessage.completed(draft, upload: context.store.upload, mayRead: { try context.store.mayRead($0, user: caller.id) })
    }

    private func send(_ draft: MessageDraft, to target: MessageTarget, caller: Caller, now: Int64) throws -> Outcome {
        let id: String
        var direct: (a: String, b: String)?
        switch target {
        case .user(let user):
            id = ConversationRules.directId(caller.id, user)
            direct = (caller.id, user)
        case .conversation(let conversation):
            id = conversation
        }
        let webhook = try messageWebhook(id, direct: direct, sender: caller.id, now: now)
        let posting = try posting(draft.clientMsgId, from: caller.id, in: id) {
            try context.store.post(
                draft, in: id, from: UserRef(id: caller.id, name: caller.name), direct: direct, now: now, webhook: webhook, endpoints: context.webhookEndpoints)
        }
        return try answer(posting, in: id)
    }

    /// How long a post whose commit lost its answer (the store went as it committed) waits for
    /// the store to say whether it has the message: a PostgreSQL restarted in the outage tests
    /// answers again within about a second; a longer outage is left to the client's retry.
    static let outcomeWait = Duration.seconds(3)

    /// The posting `attempt` makes of `clientMsgId` from `sender` in conversation `id`. When the
    /// store lost its answer as it committed, the message may be stored after all: the store is
    /// asked until it answers (for `outcomeWait`), so that a message refused is never kept and
    /// one kept is never refused; still unanswered, the send is answered `outcome_unknown`.
    func posting(_ clientMsgId: String, from sender: String, in id: String, _ attempt: () throws -> Store.Posting) throws -> Store.Posting {
        do {
            return try attempt()
        } catch let failure as SQLFailure where failure.outcomeUnknown {
            let deadline = ContinuousClock.now + Self.outcomeWait
            repeat {
                let found: Store.Posting?
                do {
                    found = try context.store.posting(clientMsgId: clientMsgId, from: sender, in: id)
                } catch {
                    Thread.sleep(forTimeInterval: 0.1)
                    continue
                }
                // Not stored: the commit was undone, so the failure is an ordinary one.
                guard let found else { throw SQLFailure(description: failure.description) }
                return found
            } while ContinuousClock.now < deadline
            context.logger.log(
                .error, "message \(clientMsgId) from \(sender) in \(id): not known whether stored: \(failure)", event: "messaging.failed",
                fields: ["conversation": id, "user": sender])
            throw ProtocolError(
                .outcomeUnknown, "the store went away as it stored message \(clientMsgId); send it again with the same clientMsgId: it is posted once")
        }
    }

    /// `msg.send`'s answer to `posting`, and `msg.new` for every member's devices.
    func answer(_ posting: Store.Posting, in id: String) throws -> Outcome {
        switch posting {
        case .notMember:
            throw ProtocolError(.conversationNotFound, "no conversation \(id) of yours")
        case .duplicate(let message):
            return Outcome(data: WireEncoder.encode(Sent(conversation: id, seq: message.seq, ts: message.ts, duplicate: true)))
        case .posted(let message, let members):
            context.metrics.count(.conversationMessages)
            return Outcome(data: WireEncoder.encode(Sent(conversation: id, seq: message.seq, ts: message.ts)), events: [Delivery(users: members, event: .messageNew(message))])
        }
    }

    /// The `message.created` webhook of a message `sender` posts to conversation `id` (`direct`:
    /// its two users, when it may not exist yet), naming the members no session of theirs hears
    /// it on (on this node), for the app's push notifications; none unless `--webhook-messages`.
    func messageWebhook(_ id: String, direct: (a: String, b: String)?, sender: String, now: Int64) throws -> (ConversationMessage) -> WebhookEvent? {
        guard context.config.webhooks.includeMessages, !context.webhookEndpoints.isEmpty else { return { _ in nil } }
        let members = try direct.map { [$0.a, $0.b] } ?? context.store.memberIds(of: id)
        let online = Set(context.presence.sessions(of: members).compactMap(\.userId))
        let offline = members.filter { $0 != sender && !online.contains($0) }
        return { message in
            WebhookEvent(type: "message.created", conversation: id, time: now, data: ["message": Self.json(message), "offline": .array(offline.map(JSONValue.string))])
        }
    }

    /// `msg.send` past the stranger limit, held: answered `held` (its id) instead of a `seq`;
    /// the app's backend hears of it (`message.held`) and releases or rejects it.
    private func hold(_ draft: MessageDraft, to target: MessageTarget, caller: Caller, peer: String, now: Int64) throws -> Outcome {
        let id: String
        switch target {
        case .user(let user): id = ConversationRules.directId(caller.id, user)
        case .conversation(let conversation): id = conversation
        }
        let heldId = String(format: "h-%013lld-", now) + HMACSHA256.randomBytes(6).map { String(format: "%02x", $0) }.joined()
        let holding = try context.store.hold(
            draft, in: id, from: UserRef(id: caller.id, name: caller.name), to: peer, as: heldId, now: now,
            webhook: { held in WebhookEvent(type: "message.held", conversation: id, time: now, data: ["message": Self.json(held)]) },
            endpoints: context.webhookEndpoints)
        struct Held: Encodable {
            var conversation: String
            var held: String
            var ts: Int64
            var duplicate: Bool?
        }
        switch holding {
        case .posted(let message):
            return Outcome(data: WireEncoder.encode(Sent(conversation: id, seq: message.seq, ts: message.ts, duplicate: true)))
        case .held(let held, let new):
            if new {
                context.logger.log(
                    .info, "a message from \(caller.id) to \(peer) is held for review", event: "message.held",
                    fields: ["conversation": id, "user": caller.id, "held": held.id])
            }
            return Outcome(data: WireEncoder.encode(Held(conversation: id, held: held.id, ts: held.at, duplicate: new ? nil : true)))
        }
    }

    /// `conv.join`: a member already is one (its conversation again); an open group takes the
    /// caller at once; one that asks keeps the request and tells its owner and admins.
    private func join(_ id: String, note: String?, caller: Caller, member: Bool, access: GroupAccess, now: Int64) throws -> Outcome {
        if member || access == .open {
            let answer = { [self] in WireEncoder.encode(["conversation": try summary(id, for: caller.id)]) }
            if member { return Outcome(data: try answer()) }
            var outcome = try admit(caller.id, to: id, by: caller.id, now: now, answer: Data())
            outcome.data = try answer()
            return outcome
        }
        let request = JoinRequest(conversation: id, user: caller.id, name: caller.name, note: note, at: now)
        let new = try context.store.addJoinRequest(request)
        let moderators = try context.store.members(of: id).filter { $0.role.isModerator }.map(\.user)
        return Outcome(data: WireEncoder.encode(["requested": true]), events: new ? [Delivery(users: moderators, event: .joinRequested(request))] : [])
    }

    /// Adds `user` to group `id` (joined, or accepted): every member, the newcomer too, gets
    /// `conv.updated` with `joined`.
    private func admit(_ user: String, to id: String, by: String, now: Int64, answer: Data) throws -> Outcome {
        let added = try context.store.addMembers(id, users: [user], now: now)
        guard !added.isEmpty else { return Outcome(data: answer) }
        let members = try context.store.memberIds(of: id)
        let info = try context.store.conversationInfo(id)
        let change = ConversationChange(conversation: id, by: by, kind: .group, title: info?.title, joined: added, memberCount: members.count)
        return Outcome(data: answer, events: [Delivery(users: members, event: .conversationUpdated(change))])
    }

    /// `conv.leave`: the caller's other devices are told it left, the others that it did; an
    /// owner's group passes to its longest-standing admin (else member); a group left empty is deleted.
    func leave(_ id: String, caller: String, role: Role) throws -> [Delivery] {
        let store = context.store
        try store.removeMember(id, user: caller)
        let remaining = try store.members(of: id)
        guard !remaining.isEmpty else {
            try store.deleteConversation(id)
            return [Delivery(users: [caller], event: .conversationRemoved(conversation: id, by: caller, reason: "left"))]
        }
        var owner: String?
        if role == .owner {
            let heir = remaining.filter { $0.role == .admin }.min { $0.joinedAt < $1.joinedAt } ?? remaining.min { $0.joinedAt < $1.joinedAt }
            if let heir {
                try store.setOwner(id, user: heir.user)
                owner = heir.user
            }
        }
        let change = ConversationChange(conversation: id, by: caller, left: [caller], memberCount: remaining.count, owner: owner)
        return [
            Delivery(users: [caller], event: .conversationRemoved(conversation: id, by: caller, reason: "left")),
            Delivery(users: remaining.map(\.user), event: .conversationUpdated(change)),
        ]
    }

    /// Who hears a member's read marks and typing: every member where the rules say so, else the
    /// member's own devices.
    private func audience(_ id: String, kind: ConversationKind?, caller: String) throws -> [String] {
        let members = try context.store.memberIds(of: id)
        return rules.toEveryone(kind ?? .group, members: members.count) ? members : [caller]
    }

    /// `msg.send`'s answer.
    struct Sent: Encodable {
        var conversation: String
        var seq: Int64
        var ts: Int64
        var duplicate: Bool?
    }

    /// A message as a webhook's data carries it.
    static func json(_ message: some Encodable) -> JSONValue {
        (try? JSONParser().parse(WireEncoder.encode(message))) ?? .null
    }

    private func summary(_ id: String, for user: String) throws -> ConversationSummary {
        guard let summary = try context.store.conversation(id, for: user) else { throw ProtocolError(.conversationNotFound, "no conversation \(id) of yours") }
        return summary
    }
}
