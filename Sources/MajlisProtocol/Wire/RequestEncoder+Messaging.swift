extension RequestEncoder {
    /// The op and args of a messaging `command` (docs/protocol.md section 17), the inverse of
    /// `RequestDecoder` for it.
    public static func request(_ command: MessagingCommand) -> (op: String, args: [String: JSONValue]) {
        var args: [String: JSONValue] = [:]
        func put(_ key: String, _ value: JSONValue?) { if let value { args[key] = value } }
        func users(_ ids: [String]) -> JSONValue { .array(ids.map(JSONValue.string)) }
        put("conversation", command.conversation.map(JSONValue.string))
        switch command {
        case .createGroup(let title, let members, let access, let about):
            put("title", .string(title))
            put("members", users(members))
            put("access", .string(access.rawValue))
            put("about", about.map(JSONValue.string))
            return ("conv.create", args)
        case .list(let after, let limit):
            put("after", after.map(JSONValue.string))
            put("limit", .int(Int64(limit)))
            return ("conv.list", args)
        case .get: return ("conv.get", args)
        case .invite(_, let invited):
            put("users", users(invited))
            return ("conv.invite", args)
        case .remove(_, let user):
            put("user", .string(user))
            return ("conv.remove", args)
        case .leave: return ("conv.leave", args)
        case .update(_, let title, let about, let access):
            put("title", title.map(JSONValue.string))
            put("about", about.map(JSONValue.string))
            put("access", access.map { .string($0.rawValue) })
            return ("conv.update", args)
        case .discover(let query, let cursor, let limit):
            put("q", query.map(JSONValue.string))
            put("cursor", cursor.map(JSONValue.string))
            put("limit", .int(Int64(limit)))
            return ("conv.discover", args)
        case .join(_, let note):
            put("note", note.map(JSONValue.string))
            return ("conv.join", args)
        case .requests: return ("conv.requests", args)
        case .answerRequest(_, let user, let accept):
            put("user", .string(user))
            put("accept", .bool(accept))
            return ("conv.answer", args)
        case .muteMember(_, let user, let seconds):
            put("user", .string(user))
            put("seconds", .int(Int64(seconds)))
            return ("conv.mute", args)
        case .feature(_, let seq, let featured):
            put("seq", .int(seq))
            put("featured", .bool(featured))
            return ("msg.feature", args)
        case .setRole(_, let user, let role):
            put("user", .string(user))
            put("role", .string(role.rawValue))
            return ("conv.role", args)
        case .settings(_, let muted, let pinned):
            put("muted", muted.map(JSONValue.bool))
            put("pinned", pinned.map(JSONValue.bool))
            return ("conv.settings", args)
        case .send(let target, let draft):
            if case .user(let user) = target { put("to", .string(user)) }
            put("clientMsgId", .string(draft.clientMsgId))
            put("type", .string(draft.type))
            put("text", draft.text.map(JSONValue.string))
            put("payload", draft.payload)
            put("fallback", draft.fallback.map(JSONValue.string))
            put("replyTo", draft.replyTo.map(JSONValue.int))
            if !draft.mentions.isEmpty { put("mentions", users(draft.mentions)) }
            return ("msg.send", args)
        case .sync(_, let after, let limit):
            put("after", .int(after))
            put("limit", .int(Int64(limit)))
            return ("msg.sync", args)
        case .read(_, let seq):
            put("seq", .int(seq))
            return ("msg.read", args)
        case .typing: return ("msg.typing", args)
        case .edit(_, let seq, let text):
            put("seq", .int(seq))
            put("text", .string(text))
            return ("msg.edit", args)
        case .revoke(_, let seq):
            put("seq", .int(seq))
            return ("msg.revoke", args)
        case .report(_, let seq, let reason):
            put("seq", .int(seq))
            put("reason", .string(reason))
            return ("msg.report", args)
        case .search(let query, _, let cursor, let limit):
            put("q", .string(query))
            put("cursor", cursor.map(JSONValue.string))
            put("limit", .int(Int64(limit)))
            return ("msg.search", args)
        case .block(let user):
            put("user", .string(user))
            return ("user.block", args)
        case .unblock(let user):
            put("user", .string(user))
            return ("user.unblock", args)
        case .listBlocks: return ("user.blocks", args)
        case .presence(let users):
            put("users", .array(users.map(JSONValue.string)))
            return ("presence.get", args)
        case .sharePresence(let sharing):
            put("share", sharing.map { .string($0.rawValue) })
            return ("presence.share", args)
        case .deliverLog(let request, let media):
            put("id", .string(request))
            put("media", .string(media))
            return ("log.deliver", args)
        }
    }
}
