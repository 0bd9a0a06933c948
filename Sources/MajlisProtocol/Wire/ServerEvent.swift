/// Every event the server sends (PROTOCOL.md section 10), with its data.
public enum ServerEvent: Sendable, Equatable {
    case roomUpdated(RoomInfo)
    case roomEnded(reason: String)
    case memberJoined(Member)
    case memberLeft(user: String, reason: String)
    case memberUpdated(Member)
    /// Joins and leaves of a busy room, coalesced (at most twice a second). `joined` lists at most
    /// the most recent few; `joinedCount` says how many joined in all.
    case membersChanged(joined: [Member], joinedCount: Int, left: [String], memberCount: Int)
    case seatUpdated([Seat])
    case attributesUpdated(set: [String: AttributeValue], deleted: [String])
    case requestReceived(SeatRequest)
    /// A request ended: `reason` is cancelled, accepted, rejected, seated, left or expired.
    case requestCancelled(requestId: String, user: String, reason: String)
    case requestAccepted(requestId: String, index: Int)
    case requestRejected(requestId: String)
    case seatInvited(inviteId: String, from: String, index: Int?)
    /// To the inviter: the invitee answered.
    case inviteReplied(inviteId: String, user: String, accept: Bool)
    case youKicked(by: String, until: Int64?)
    case youChatMuted(until: Int64?)
    case chatMessage(ChatMessage)
    case signal(from: String, type: String, payload: JSONValue)
    case tokenExpiring(expiresAt: Int64)
    /// The loudest speakers now (at most five times a second).
    case speakerLevels([SpeakerLevel])
    /// A member's network, measured by the server: `up` from what it sends, `down` from its reports.
    case networkQuality(user: String, up: NetworkQualityLevel, down: NetworkQualityLevel)
    /// The user joined the event's room from another device, which now gets the room's events:
    /// to this device the room is left (the user is still a member).
    case youElsewhere
    /// The session ends now (the connection closes after it): `reason` `revoked` (the app's
    /// backend revoked the user's sessions; `message` says why) or `elsewhere` (the user signed
    /// in on another device, and the server keeps one device a user).
    case sessionEnded(reason: String, message: String?)
    /// A new message in one of the user's conversations.
    case messageNew(ConversationMessage)
    /// A message was edited or revoked: the message as it is now.
    case messageUpdated(ConversationMessage)
    /// A member has read a conversation up to `seq`.
    case messageRead(conversation: String, user: String, seq: Int64)
    /// A member is typing, until `until` (Unix ms) unless told again.
    case typing(conversation: String, user: String, until: Int64)
    /// A conversation changed: its title, its members, or the user's own settings of it.
    case conversationUpdated(ConversationChange)
    /// The user is no longer a member of a conversation: `reason` is `left` (on another device)
    /// or `removed`.
    case conversationRemoved(conversation: String, by: String, reason: String)
    /// A message of the user's that was held for review (`held` in `msg.send`'s answer) will
    /// not be delivered: the app's backend rejected it.
    case messageRejected(conversation: String, clientMsgId: String, reason: String)
    /// A user asks to join a group the user owns or administers.
    case joinRequested(JoinRequest)
    /// The user's request to join a group was declined.
    case joinDeclined(conversation: String, by: String)
    /// A member sent an emoji of a resource pack to seat `index`: show it there now.
    case seatEmoji(index: Int, user: String, pack: String, item: String)
    /// The app's backend sent a gift in the room: show its effect (on seat `index`, if given).
    case giftSent(Gift)
    /// The app's backend asks this user's client for its log (section 20).
    case logRequested(LogRequest)
    /// A contact came online or went offline, or stopped sharing their presence.
    case presenceChanged(UserPresence)
    /// An event this version does not know; kept as it came.
    case unknown(name: String, data: JSONValue)

    /// The `ev` name on the wire.
    public var name: String {
        switch self {
        case .roomUpdated: return "room.updated"
        case .roomEnded: return "room.ended"
        case .memberJoined: return "member.joined"
        case .memberLeft: return "member.left"
        case .memberUpdated: return "member.updated"
        case .membersChanged: return "members.changed"
        case .seatUpdated: return "seat.updated"
        case .attributesUpdated: return "attr.updated"
        case .requestReceived: return "request.received"
        case .requestCancelled: return "request.cancelled"
        case .requestAccepted: return "request.accepted"
        case .requestRejected: return "request.rejected"
        case .seatInvited: return "seat.invited"
        case .inviteReplied: return "seat.inviteReplied"
        case .youKicked: return "you.kicked"
        case .youChatMuted: return "you.chatMuted"
        case .chatMessage: return "chat.message"
        case .signal: return "signal"
        case .tokenExpiring: return "token.expiring"
        case .speakerLevels: return "speaker.levels"
        case .networkQuality: return "network.quality"
        case .youElsewhere: return "you.elsewhere"
        case .sessionEnded: return "session.ended"
        case .messageNew: return "msg.new"
        case .messageUpdated: return "msg.updated"
        case .messageRead: return "msg.read"
        case .typing: return "msg.typing"
        case .conversationUpdated: return "conv.updated"
        case .conversationRemoved: return "conv.removed"
        case .messageRejected: return "msg.rejected"
        case .joinRequested: return "conv.request"
        case .joinDeclined: return "conv.declined"
        case .presenceChanged: return "presence.changed"
        case .seatEmoji: return "seat.emoji"
        case .giftSent: return "gift.sent"
        case .logRequested: return "log.requested"
        case .unknown(let name, _): return name
        }
    }

    /// Whether the event changes shared room state, and so carries a `seq`.
    public var changesRoomState: Bool {
        switch self {
        case .roomUpdated, .roomEnded, .memberJoined, .memberLeft, .memberUpdated, .membersChanged, .seatUpdated, .attributesUpdated:
            return true
        default:
            return false
        }
    }
}
