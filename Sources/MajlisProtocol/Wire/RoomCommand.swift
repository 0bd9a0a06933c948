/// A request addressed to one room (every op of PROTOCOL.md sections 6-9), already validated for
/// shape and ranges.
public enum RoomCommand: Sendable, Equatable {
    case create(RoomSettings)
    case join(create: RoomSettings?)
    case leave
    case sync
    case update(title: String?, announcement: String?, mode: RoomMode?, seatCount: Int?)
    case muteChatAll(Bool)
    /// `room.emoji`: whether members may send seat emoji (the owner and admins always may).
    case allowEmoji(Bool)
    case end

    case takeSeat(index: Int?)
    case leaveSeat
    case switchSeat(to: Int)
    case lockSeat(index: Int, locked: Bool, kick: Bool)
    case muteSeat(index: Int, muted: Bool)
    /// Every seat at once (`seat.muteAll`): host-muted, or, when members may unmute themselves,
    /// every seated member's mic turned off; `muted: false` lifts every host mute.
    case muteAllSeats(muted: Bool, membersMayUnmute: Bool)
    case kickFromSeat(index: Int)
    case inviteToSeat(user: String, index: Int?)
    case replyToInvite(inviteId: String, accept: Bool)
    case setMic(on: Bool)
    /// `seat.emoji`: an emoji of a resource pack (section 19) shown on seat `index` to everyone.
    case sendEmoji(index: Int, pack: String, item: String)
    /// `gift.send` (the app's backend only): `count` of `item` of gift pack `pack` from `from` to
    /// member `to` or to whoever sits on seat `index`; `key` names it, so a gift sent again under
    /// the same key counts once.
    case sendGift(from: String, to: String?, index: Int?, pack: String, item: String, count: Int, key: String)
    /// `gift.leaders`: the room's top givers and receivers of gifts sent from `since` to before
    /// `until` (Unix ms), `limit` of each.
    case giftLeaders(since: Int64, until: Int64, limit: Int)

    case createRequest(index: Int?)
    case cancelRequest(requestId: String)
    case acceptRequest(requestId: String, index: Int?)
    case rejectRequest(requestId: String)

    case listMembers(after: String?, limit: Int)
    /// `refusesOwnership`: whether the member will not be handed the room (nil: unchanged).
    case updateMember(name: String?, avatar: String?, refusesOwnership: Bool? = nil)
    case setRole(user: String, role: Role)
    case transferOwner(user: String)
    case kickMember(user: String, banSeconds: Int)
    /// Lifts a ban (`member.unban`).
    case unban(user: String)
    case muteChat(user: String, seconds: Int)

    case sendChat(ChatDraft)
    case chatHistory(before: Int64?, limit: Int)

    /// `attr.set` and `attr.delete` are one-step batches that skip failed keys; `attr.batch` is
    /// all or nothing.
    case attributes([AttributeOperation], force: Bool, atomic: Bool)
    case sendSignal(to: SignalTarget, type: String, payload: JSONValue)
    /// A browser's SDP offer (`webrtc.offer`): the server answers it and sets up its media.
    case offerWebRTC(sdp: String)

    /// Whether the op may write to the store (room settings, seat locks and mutes, roles, bans,
    /// chat, attributes, who sits where, the end of the room). A server keeps a copy of the room
    /// to roll back to for these, and answers `ok` only once the store has the change; the
    /// randomized engine test checks no other op asks for a write, but for a seated member's
    /// leaving (`leave`: the member is gone whatever the store says; a failed save is logged,
    /// and a restored room lets the seat go after the resume grace).
    public var mayStore: Bool {
        switch self {
        case .create, .update, .muteChatAll, .allowEmoji, .end, .lockSeat, .muteSeat, .muteAllSeats, .setRole, .transferOwner, .kickMember, .unban,
            .sendChat, .attributes, .takeSeat, .leaveSeat, .switchSeat, .kickFromSeat, .replyToInvite, .acceptRequest, .sendGift:
            return true
        case .join, .leave, .sync, .inviteToSeat, .setMic, .createRequest, .cancelRequest, .rejectRequest, .listMembers, .updateMember,
            .muteChat, .chatHistory, .sendSignal, .offerWebRTC, .sendEmoji, .giftLeaders:
            return false
        }
    }

    /// Whether the op needs the caller to be a member already.
    public var requiresMembership: Bool {
        switch self {
        case .create, .join, .end: return false
        default: return true
        }
    }
}
