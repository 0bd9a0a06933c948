import MajlisProtocol
import MajlisTransport

/// Who may do what in a conversation, and how large one may grow: pure, from the facts the
/// store gave (the caller's membership, the target's, the member count), tested from a table
/// without a store (`ConversationRulesTests`).
struct ConversationRules: Sendable {
    /// The most members a group may have, its owner included (`majlis serve --max-group-members`).
    var groupSize = 500
    /// Read marks and typing go to every member of a direct conversation and of a group of up to
    /// this many members; in a larger group, only to the reader's (typist's) own devices: told to
    /// everyone, each read would be a write to every member (2,000 members reading a message: four
    /// million frames).
    var broadcastUpTo = 100
    /// How long after sending its sender may revoke a message (ms; `majlis serve --revoke-seconds`).
    /// A group's owner and admins revoke any message, any time.
    var revokeWindow: Int64 = 120_000
    /// How long after sending its sender may edit a text message (ms; `--edit-seconds`).
    var editWindow: Int64 = 900_000
    /// Messages a user may send to someone who has not written back and shares no group with
    /// them (`--stranger-messages`): a stranger's first few, and no more until an answer.
    var strangerMessages = 3
    /// What becomes of a stranger's message past `strangerMessages` (`--stranger-overflow`):
    /// refused, or held until the app's backend releases or rejects it (the server API).
    var strangerOverflow = StrangerOverflow.refuse

    enum StrangerOverflow: String, Sendable, CaseIterable {
        case refuse, hold
    }

    /// What the caller's command needs to know about the conversation it names.
    struct Facts: Sendable {
        /// The caller's membership (nil: not a member, or no such conversation).
        var caller: Store.Membership?
        /// The membership of the user the command names (`conv.remove`, `conv.role`).
        var target: Store.Membership?
        /// Members now (for `conv.invite`: how many of the invited are not members yet, added).
        var members = 0
        var newcomers = 0
        /// The message the command names (`msg.edit`, `msg.revoke`).
        var message: ConversationMessage?
        /// For a direct conversation's `msg.send` and `msg.typing`: its other user, and what
        /// stands between the two.
        var peer: String?
        var acquaintance: Store.Acquaintance?
        /// For `conv.join`: the group as anyone sees it (nil: no such conversation).
        var group: ConversationInfo?
        /// For `conv.answer`: whether the user named asked to join.
        var requested = false
    }

    /// The id of the direct conversation between `a` and `b` (either order): the same on every
    /// node, so that the first message makes it once.
    static func directId(_ a: String, _ b: String) -> String {
        let pair = a < b ? "\(a)\n\(b)" : "\(b)\n\(a)"
        let digest = HMACSHA256.mac(key: Array("majlis direct conversation".utf8), message: Array(pair.utf8))
        return "d-" + digest.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// Why `caller` may not carry out `command` at `now` given `facts` (nil: it may).
    func refusal(_ command: MessagingCommand, by caller: String, facts: Facts, now: Int64) -> ProtocolError? {
        switch command {
        case .createGroup(_, let members, _, _):
            let size = Set(members + [caller]).count
            return size > groupSize ? ProtocolError(.forbidden, "a group holds at most \(groupSize) members") : nil
        case .list:
            return nil
        case .search(_, let id?, _, _):
            return facts.caller == nil ? notFound(id) : nil
        case .search:
            return nil
        case .send(.user(let user), _):
            return user == caller ? ProtocolError(.badRequest, "a message goes to another user") : between(facts, sending: true)
        case .send(.conversation(let id), let draft):
            guard let membership = facts.caller else { return notFound(id) }
            if membership.mutedUntil > now {
                return ProtocolError(.forbidden, "the group's owner or an admin keeps you from sending here for \((membership.mutedUntil - now + 999) / 1000) s more")
            }
            if let reply = draft.replyTo, reply > membership.lastSeq {
                return ProtocolError(.badRequest, "args.replyTo: conversation \(id) has no message \(reply)")
            }
            return between(facts, sending: true)
        case .typing(let id):
            return facts.caller == nil ? notFound(id) : between(facts, sending: false)
        case .get(let id), .sync(let id, _, _), .read(let id, _), .settings(let id, _, _):
            return facts.caller == nil ? notFound(id) : nil
        case .report(let id, let seq, _):
            guard facts.caller != nil else { return notFound(id) }
            return facts.message == nil ? ProtocolError(.badRequest, "conversation \(id) has no message \(seq)") : nil
        case .block(let user), .unblock(let user):
            return user == caller ? ProtocolError(.badRequest, "args.user: one does not block oneself") : nil
        case .listBlocks, .presence, .sharePresence, .deliverLog:
            return nil
        case .invite(let id, _):
            if let refusal = groupOnly(id, facts, "invite") { return refusal }
            guard facts.caller?.role.isModerator == true else { return ProtocolError(.forbidden, "only the group's owner and admins invite") }
            guard facts.members + facts.newcomers <= groupSize else {
                return ProtocolError(.forbidden, "the group would have \(facts.members + facts.newcomers) members; it holds at most \(groupSize)")
            }
            return nil
        case .remove(let id, let user):
            if let refusal = groupOnly(id, facts, "remove members") { return refusal }
            guard user != caller else { return ProtocolError(.badRequest, "to leave a group, use conv.leave") }
            guard let target = facts.target else { return ProtocolError(.badRequest, "\(user) is not a member of conversation \(id)") }
            switch (facts.caller?.role, target.role) {
            case (.owner?, _), (.admin?, .member): return nil
            case (.admin?, _): return ProtocolError(.forbidden, "an admin removes members only")
            default: return ProtocolError(.forbidden, "only the group's owner and admins remove members")
            }
        case .leave(let id):
            return groupOnly(id, facts, "be left")
        case .update(let id, _, _, _):
            if let refusal = groupOnly(id, facts, "be changed") { return refusal }
            return facts.caller?.role.isModerator == true ? nil : ProtocolError(.forbidden, "only the group's owner and admins change it")
        case .discover:
            return nil
        case .join(let id, _):
            if facts.caller != nil { return nil }
            guard let group = facts.group, group.kind == .group, let access = group.access, access.isPublic else { return notFound(id) }
            guard access == .request || group.memberCount < groupSize else { return ProtocolError(.forbidden, "the group is full: it holds at most \(groupSize) members") }
            return nil
        case .requests(let id):
            if let refusal = groupOnly(id, facts, "take requests") { return refusal }
            return facts.caller?.role.isModerator == true ? nil : ProtocolError(.forbidden, "only the group's owner and admins see its requests")
        case .answerRequest(let id, let user, let accept):
            if let refusal = groupOnly(id, facts, "take requests") { return refusal }
            guard facts.caller?.role.isModerator == true else { return ProtocolError(.forbidden, "only the group's owner and admins answer requests") }
            guard facts.requested else { return ProtocolError(.badRequest, "\(user) has not asked to join conversation \(id)") }
            guard !accept || facts.target != nil || facts.members < groupSize else {
                return ProtocolError(.forbidden, "the group is full: it holds at most \(groupSize) members")
            }
            return nil
        case .muteMember(let id, let user, _):
            if let refusal = groupOnly(id, facts, "mute members") { return refusal }
            guard user != caller else { return ProtocolError(.badRequest, "one does not mute oneself") }
            guard let target = facts.target else { return ProtocolError(.badRequest, "\(user) is not a member of conversation \(id)") }
            switch (facts.caller?.role, target.role) {
            case (_, .owner): return ProtocolError(.forbidden, "the group's owner is not muted")
            case (.owner?, _), (.admin?, .member): return nil
            case (.admin?, _): return ProtocolError(.forbidden, "an admin mutes members only")
            default: return ProtocolError(.forbidden, "only the group's owner and admins mute members")
            }
        case .feature(let id, let seq, _):
            if let refusal = groupOnly(id, facts, "feature messages") { return refusal }
            guard facts.caller?.role.isModerator == true else { return ProtocolError(.forbidden, "only the group's owner and admins feature messages") }
            guard let message = facts.message else { return ProtocolError(.badRequest, "conversation \(id) has no message \(seq)") }
            return message.revokedBy == nil ? nil : ProtocolError(.badRequest, "message \(seq) was revoked")
        case .edit(let id, let seq, _):
            guard facts.caller != nil else { return notFound(id) }
            guard let message = facts.message else { return ProtocolError(.badRequest, "conversation \(id) has no message \(seq)") }
            guard message.from.id == caller else { return ProtocolError(.forbidden, "only its sender edits a message") }
            guard message.revokedBy == nil else { return ProtocolError(.badRequest, "message \(seq) was revoked") }
            guard message.type == "text" else { return ProtocolError(.badRequest, "only a text message is edited; message \(seq) is a \(message.type)") }
            guard now - message.ts <= editWindow else {
                return ProtocolError(.forbidden, "a message is edited within \(editWindow / 1000) s of sending it")
            }
            return nil
        case .revoke(let id, let seq):
            guard let membership = facts.caller else { return notFound(id) }
            guard let message = facts.message else { return ProtocolError(.badRequest, "conversation \(id) has no message \(seq)") }
            if message.revokedBy != nil { return nil }
            if membership.kind == .group, membership.role.isModerator { return nil }
            guard message.from.id == caller else {
                return ProtocolError(.forbidden, "only its sender, or a group's owner or admin, revokes a message")
            }
            guard now - message.ts <= revokeWindow else {
                return ProtocolError(.forbidden, "a message is revoked within \(revokeWindow / 1000) s of sending it")
            }
            return nil
        case .setRole(let id, let user, _):
            if let refusal = groupOnly(id, facts, "have roles") { return refusal }
            guard facts.caller?.role == .owner else { return ProtocolError(.forbidden, "only the group's owner sets roles") }
            guard let target = facts.target else { return ProtocolError(.badRequest, "\(user) is not a member of conversation \(id)") }
            return target.role == .owner ? ProtocolError(.badRequest, "the owner's role is owner") : nil
        }
    }

    /// What a block, or the other user's silence, refuses of a direct conversation's message or
    /// typing (nil in a group: blocks keep direct conversations apart only).
    private func between(_ facts: Facts, sending: Bool) -> ProtocolError? {
        guard let peer = facts.peer, let acquaintance = facts.acquaintance else { return nil }
        if acquaintance.blocks { return ProtocolError(.forbidden, "you block \(peer): unblock them to write to them") }
        if acquaintance.blocked { return ProtocolError(.forbidden, "\(peer) does not take your messages") }
        if sending, strangerOverflow == .refuse, Self.pastStrangerLimit(acquaintance, strangerMessages) {
            return ProtocolError(
                .forbidden, "\(peer) has not written back yet: at most \(strangerMessages) messages to someone who has not, and shares no group with you")
        }
        return nil
    }

    /// Whether a message to a user the rules let through (`refusal` is nil) is held for the app's
    /// backend to review: the sender has written its share to someone who has not answered.
    func holds(_ command: MessagingCommand, facts: Facts) -> Bool {
        guard case .send = command, strangerOverflow == .hold, let acquaintance = facts.acquaintance else { return false }
        return Self.pastStrangerLimit(acquaintance, strangerMessages)
    }

    private static func pastStrangerLimit(_ acquaintance: Store.Acquaintance, _ limit: Int) -> Bool {
        !acquaintance.answered && !acquaintance.shareGroup && acquaintance.sent >= limit
    }

    /// Refuses a group's op on a conversation the caller is not in, or on a direct one.
    private func groupOnly(_ id: String, _ facts: Facts, _ what: String) -> ProtocolError? {
        guard let membership = facts.caller else { return notFound(id) }
        return membership.kind == .direct ? ProtocolError(.badRequest, "a direct conversation cannot \(what)") : nil
    }

    private func notFound(_ id: String) -> ProtocolError {
        ProtocolError(.conversationNotFound, "no conversation \(id) of yours")
    }

    /// Whether read marks and typing in a conversation of `kind` with `members` go to every member.
    func toEveryone(_ kind: ConversationKind, members: Int) -> Bool {
        kind == .direct || members <= broadcastUpTo
    }
}
