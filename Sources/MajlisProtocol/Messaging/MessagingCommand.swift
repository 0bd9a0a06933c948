/// A messaging request (docs/protocol.md section 17): conversations and their messages, outside
/// any room.
public enum MessagingCommand: Sendable, Equatable {
    /// `conv.create`: a private group of the caller (its owner) and `members`.
    case createGroup(title: String, members: [String])
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
    /// `conv.update`: a group's title (its owner and admins).
    case rename(conversation: String, title: String)
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

    /// The conversation the command is about, when it names one.
    public var conversation: String? {
        switch self {
        case .createGroup, .list, .block, .unblock, .listBlocks: return nil
        case .send(.user, _): return nil
        case .search(_, let id, _, _): return id
        case .send(.conversation(let id), _): return id
        case .get(let id), .invite(let id, _), .remove(let id, _), .leave(let id), .rename(let id, _), .setRole(let id, _, _), .settings(let id, _, _),
            .sync(let id, _, _), .read(let id, _), .typing(let id), .edit(let id, _, _), .revoke(let id, _), .report(let id, _, _):
            return id
        }
    }
}
