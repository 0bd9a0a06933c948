/// A messaging request (docs/protocol.md section 17): conversations and their messages, outside
/// any room.
public enum MessagingCommand: Sendable, Equatable {
    /// `conv.create`: a group of the caller (its owner) and `members`; `access` says who else
    /// may join it.
    case createGroup(title: String, members: [String], access: GroupAccess = .private, about: String? = nil)
    /// `conv.list`: the caller's conversations by id, after `after`.
    case list(after: String?, limit: Int)
    /// `conv.get`: one conversation and its members.
    case get(conversation: String)
    /// `conv.invite`: adds users to a group (its owner and admins).
    case invite(conversation: String, users: [String])
    /// `conv.remove`: removes a member from a group (its owner: anyone; an admin: members).
    case remove(conversation: String, user: String)
    /// `conv.leave`: the caller leaves a group.
    case leave(conversation: String)
    /// `conv.update`: a group's title, what it is about, who may join (its owner and admins).
    case update(conversation: String, title: String?, about: String?, access: GroupAccess?)
    /// `conv.discover`: public groups, those whose title or about has every word of `query`
    /// (all without one), the largest first; from `cursor` (the previous page's `next`) on.
    case discover(query: String?, cursor: String?, limit: Int)
    /// `conv.join`: the caller joins a public group (`open`), or asks to (`request`, with `note`).
    case join(conversation: String, note: String?)
    /// `conv.requests`: a group's pending join requests (its owner and admins).
    case requests(conversation: String)
    /// `conv.answer`: the owner or an admin accepts or declines `user`'s join request.
    case answerRequest(conversation: String, user: String, accept: Bool)
    /// `conv.mute`: the owner (anyone) or an admin (members) keeps a member from sending for
    /// `seconds` (0: no more).
    case muteMember(conversation: String, user: String, seconds: Int)
    /// `msg.feature`: the owner or an admin features (pins for everyone) a group's message, or no more.
    case feature(conversation: String, seq: Int64, featured: Bool)
    /// `conv.role`: the owner makes a member an admin, or an admin a member.
    case setRole(conversation: String, user: String, role: Role)
    /// `conv.settings`: the caller's own settings of a conversation.
    case settings(conversation: String, muted: Bool?, pinned: Bool?)
    /// `msg.send`.
    case send(MessageTarget, MessageDraft)
    /// `msg.sync`: messages after `after`, oldest first.
    case sync(conversation: String, after: Int64, limit: Int)
    /// `msg.read`: the caller has read up to `seq`.
    case read(conversation: String, seq: Int64)
    /// `msg.typing`: the caller is typing.
    case typing(conversation: String)
    /// `msg.edit`: the sender changes a text message's text.
    case edit(conversation: String, seq: Int64, text: String)
    /// `msg.revoke`: the sender (within a limit) or a group's owner or admin takes a message back.
    case revoke(conversation: String, seq: Int64)
    /// `msg.report`: a member tells the app's backend (by webhook) of a message, and why.
    case report(conversation: String, seq: Int64, reason: String)
    /// `msg.search`: the caller's messages with every word of `query`, newest first, in one
    /// conversation or all of the caller's; from `cursor` (the previous page's `next`) on.
    case search(query: String, conversation: String?, cursor: String?, limit: Int)
    /// `user.block`, `user.unblock`: no direct messages either way between the caller and `user`.
    case block(user: String)
    case unblock(user: String)
    /// `user.blocks`: the users the caller blocks.
    case listBlocks
    /// `presence.get`: whether these users are online, for those of them who are the caller's
    /// contacts and share their presence.
    case presence(users: [String])
    /// `presence.share`: who sees the caller's presence (nil: only say who does now).
    case sharePresence(PresenceSharing?)
    /// `log.deliver`: the caller's client hands over the log a `log.requested` asked for: `media`,
    /// a finished text upload of the caller's.
    case deliverLog(request: String, media: String)

    /// The conversation the command is about, when it names one.
    public var conversation: String? {
        switch self {
        case .createGroup, .list, .block, .unblock, .listBlocks, .discover, .presence, .sharePresence, .deliverLog: return nil
        case .send(.user, _): return nil
        case .search(_, let id, _, _): return id
        case .send(.conversation(let id), _): return id
        case .get(let id), .invite(let id, _), .remove(let id, _), .leave(let id), .update(let id, _, _, _), .setRole(let id, _, _), .settings(let id, _, _),
            .join(let id, _), .requests(let id), .answerRequest(let id, _, _), .muteMember(let id, _, _), .feature(let id, _, _),
            .sync(let id, _, _), .read(let id, _), .typing(let id), .edit(let id, _, _), .revoke(let id, _), .report(let id, _, _):
            return id
        }
    }
}
