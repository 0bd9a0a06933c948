import Foundation
import MajlisProtocol
import MajlisTransport

/// What the app's backend does to conversations through the server API (docs/openapi.yaml,
/// `/v1/conversations`, `/v1/users/{user}/messages`, `/v1/held-messages`): each makes the
/// `Outcome` that `perform` answers and delivers, with the same events members' ops send. The
/// backend (`by`: its token's subject) is no member; the group size still holds.
extension MessagingRequests {
    /// A group owned by `owner`, with `members`: its `ConversationInfo`.
    func createGroup(title: String, owner: String, members: [String], access: GroupAccess, about: String?, by: String, now: Int64) throws -> Outcome {
        if let refusal = rules.refusal(.createGroup(title: title, members: members), by: owner, facts: .init(), now: now) { throw refusal }
        let id = "g-" + HMACSHA256.randomBytes(12).map { String(format: "%02x", $0) }.joined()
        let invited = members.filter { $0 != owner }
        try context.store.createGroup(id, title: title, owner: owner, members: invited, access: access, about: about, now: now)
        let everyone = [owner] + invited
        let change = ConversationChange(
            conversation: id, by: by, kind: .group, title: title, joined: everyone, memberCount: everyone.count, owner: owner, about: about, access: access)
        return Outcome(data: WireEncoder.encode(try info(id)), events: [Delivery(users: everyone, event: .conversationUpdated(change))])
    }

    /// Conversation `id` and its members.
    func conversation(_ id: String) throws -> Outcome {
        struct Details: Encodable {
            var conversation: ConversationInfo
            var members: [ConversationMember]
        }
        return Outcome(data: WireEncoder.encode(Details(conversation: try info(id), members: try context.store.members(of: id))))
    }

    /// Adds `users` to group `id`: `{added}`.
    func addMembers(_ users: [String], to id: String, by: String, now: Int64) throws -> Outcome {
        let conversation = try group(id)
        let newcomers = try users.filter { try context.store.membership(id, user: $0) == nil }.count
        guard conversation.memberCount + newcomers <= rules.groupSize else {
            throw ProtocolError(.forbidden, "the group would have \(conversation.memberCount + newcomers) members; it holds at most \(rules.groupSize)")
        }
        let added = try context.store.addMembers(id, users: users, now: now)
        guard !added.isEmpty else { return Outcome(data: WireEncoder.encode(["added": [String]()])) }
        let members = try context.store.memberIds(of: id)
        let change = ConversationChange(conversation: id, by: by, kind: .group, title: conversation.title, joined: added, memberCount: members.count)
        return Outcome(data: WireEncoder.encode(["added": added]), events: [Delivery(users: members, event: .conversationUpdated(change))])
    }

    /// Removes `user` from group `id` (its owner too: the group passes on, as when an owner
    /// leaves). A user who is not a member is removed already: `{}`, nothing changes.
    func removeMember(_ user: String, from id: String, by: String) throws -> Outcome {
        _ = try group(id)
        guard let membership = try context.store.membership(id, user: user) else { return Outcome(data: WireEncoder.encode(EmptyData())) }
        var events = try leave(id, caller: user, role: membership.role)
        // Told as a removal, by the backend.
        events[0] = Delivery(users: [user], event: .conversationRemoved(conversation: id, by: by, reason: "removed"))
        return Outcome(data: WireEncoder.encode(EmptyData()), events: events)
    }

    /// Posts `draft` as `sender` (the system or a bot; no member needed) to conversation `id`,
    /// or, with `direct`, to the direct conversation of `sender` and that user (made if need be).
    func post(_ draft: MessageDraft, as sender: UserRef, in id: String?, direct: String?, now: Int64) throws -> Outcome {
        let conversation = id ?? ConversationRules.directId(sender.id, direct ?? "")
        let webhook = try messageWebhook(conversation, direct: direct.map { (sender.id, $0) }, sender: sender.id, now: now)
        let posting = try posting(draft.clientMsgId, from: sender.id, in: conversation) {
            try context.store.post(
                draft, in: conversation, from: sender, direct: direct.map { (sender.id, $0) }, member: false, now: now, webhook: webhook,
                endpoints: context.webhookEndpoints)
        }
        return try answer(posting, in: conversation)
    }

    /// Revokes message `seq` of `id` (any message, any time), as `by`.
    func delete(_ seq: Int64, in id: String, by: String) throws -> Outcome {
        _ = try info(id)
        guard let message = try context.store.message(seq, in: id) else { throw ProtocolError(.messageNotFound, "conversation \(id) has no message \(seq)") }
        guard message.revokedBy == nil else { return Outcome(data: WireEncoder.encode(EmptyData())) }
        try context.store.revokeMessage(seq, in: id, by: by)
        return try updated(seq, in: id)
    }

    /// Up to `limit` messages of `id` after `after`, oldest first: `{messages, more}`.
    func messages(in id: String, after: Int64, limit: Int) throws -> Outcome {
        _ = try info(id)
        struct Page: Encodable {
            var messages: [ConversationMessage]
            var more: Bool
        }
        let found = try context.store.messages(in: id, after: after, limit: limit + 1)
        return Outcome(data: WireEncoder.encode(Page(messages: Array(found.prefix(limit)), more: found.count > limit)))
    }

    /// Held messages, oldest first, after id `after`: `{messages, more}`.
    func heldMessages(after: String?, limit: Int) throws -> Outcome {
        struct Page: Encodable {
            var messages: [HeldMessage]
            var more: Bool
        }
        let found = try context.store.heldMessages(after: after, limit: limit + 1)
        return Outcome(data: WireEncoder.encode(Page(messages: Array(found.prefix(limit)), more: found.count > limit)))
    }

    /// Posts held message `heldId` as its sender sent it: `{conversation, seq, ts}`, and
    /// `msg.new` to both users' devices (the sender's too). Refused while either blocks the other.
    func release(_ heldId: String, now: Int64) throws -> Outcome {
        guard let held = try context.store.heldMessage(heldId) else { throw ProtocolError(.messageNotFound, "no held message \(heldId)") }
        let acquaintance = try context.store.acquaintance(of: held.from.id, with: held.to, direct: held.conversation)
        guard !acquaintance.blocks, !acquaintance.blocked else {
            throw ProtocolError(.conflict, "\(acquaintance.blocked ? held.to : held.from.id) blocks the other now: reject the message instead")
        }
        let webhook = try messageWebhook(held.conversation, direct: (held.from.id, held.to), sender: held.from.id, now: now)
        guard let released = try context.store.release(heldId, now: now, webhook: webhook, endpoints: context.webhookEndpoints) else {
            throw ProtocolError(.messageNotFound, "no held message \(heldId)")
        }
        return try answer(released.posting, in: held.conversation)
    }

    /// Forgets held message `heldId` unsent; its sender's devices get `msg.rejected`.
    func reject(_ heldId: String, reason: String) throws -> Outcome {
        guard let held = try context.store.reject(heldId) else { throw ProtocolError(.messageNotFound, "no held message \(heldId)") }
        let event = ServerEvent.messageRejected(conversation: held.conversation, clientMsgId: held.draft.clientMsgId, reason: reason)
        return Outcome(data: WireEncoder.encode(EmptyData()), events: [Delivery(users: [held.from.id], event: event)])
    }

    // MARK: Helpers

    private func info(_ id: String) throws -> ConversationInfo {
        guard let info = try context.store.conversationInfo(id) else { throw ProtocolError(.conversationNotFound, "no conversation \(id)") }
        return info
    }

    private func group(_ id: String) throws -> ConversationInfo {
        let info = try info(id)
        guard info.kind == .group else { throw ProtocolError(.conflict, "conversation \(id) is a direct conversation, not a group") }
        return info
    }
}
