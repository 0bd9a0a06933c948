extension ServerEvent {
    private struct RoomData: Codable { var room: RoomInfo }
    private struct ReasonData: Codable { var reason: String }
    private struct MemberData: Codable { var member: Member }
    private struct LeftData: Codable { var user: String; var reason: String }
    private struct SeatsData: Codable { var seats: [Seat] }
    private struct MembersChangedData: Codable { var joined: [Member]; var joinedCount: Int?; var left: [String]; var memberCount: Int }
    private struct AttributesData: Codable { var set: [String: AttributeValue]; var deleted: [String] }
    private struct RequestData: Codable { var request: SeatRequest }
    private struct RequestEndData: Codable { var requestId: String; var user: String; var reason: String }
    private struct AcceptedData: Codable { var requestId: String; var index: Int }
    private struct RejectedData: Codable { var requestId: String }
    private struct InvitedData: Codable { var inviteId: String; var from: String; var index: Int? }
    private struct InviteReplyData: Codable { var inviteId: String; var user: String; var accept: Bool }
    private struct KickedData: Codable { var by: String; var until: Int64? }
    private struct MutedData: Codable { var until: Int64? }
    private struct SignalData: Codable { var from: String; var type: String; var payload: JSONValue }
    private struct ExpiringData: Codable { var expiresAt: Int64 }
    private struct LevelsData: Codable { var levels: [SpeakerLevel] }
    private struct QualityData: Codable { var user: String; var up: NetworkQualityLevel; var down: NetworkQualityLevel }
    private struct EmptyData: Codable {}
    private struct EndedData: Codable { var reason: String; var message: String? }
    private struct ReadData: Codable { var conversation: String; var user: String; var seq: Int64 }
    private struct TypingData: Codable { var conversation: String; var user: String; var until: Int64 }
    private struct RemovedData: Codable { var conversation: String; var by: String; var reason: String }
    private struct DeclinedData: Codable { var conversation: String; var by: String }
    private struct EmojiData: Codable { var index: Int; var user: String; var pack: String; var item: String }
    private struct MessageRejectedData: Codable { var conversation: String; var clientMsgId: String; var reason: String }

    /// Encodes the event's data object.
    func encodeData(to encoder: any Encoder) throws {
        switch self {
        case .roomUpdated(let room): try RoomData(room: room).encode(to: encoder)
        case .roomEnded(let reason): try ReasonData(reason: reason).encode(to: encoder)
        case .memberJoined(let member), .memberUpdated(let member): try MemberData(member: member).encode(to: encoder)
        case .memberLeft(let user, let reason): try LeftData(user: user, reason: reason).encode(to: encoder)
        case .seatUpdated(let seats): try SeatsData(seats: seats).encode(to: encoder)
        case .membersChanged(let joined, let joinedCount, let left, let count):
            try MembersChangedData(joined: joined, joinedCount: joinedCount, left: left, memberCount: count).encode(to: encoder)
        case .attributesUpdated(let set, let deleted): try AttributesData(set: set, deleted: deleted).encode(to: encoder)
        case .requestReceived(let request): try RequestData(request: request).encode(to: encoder)
        case .requestCancelled(let id, let user, let reason):
            try RequestEndData(requestId: id, user: user, reason: reason).encode(to: encoder)
        case .requestAccepted(let id, let index): try AcceptedData(requestId: id, index: index).encode(to: encoder)
        case .requestRejected(let id): try RejectedData(requestId: id).encode(to: encoder)
        case .seatInvited(let id, let from, let index): try InvitedData(inviteId: id, from: from, index: index).encode(to: encoder)
        case .inviteReplied(let id, let user, let accept):
            try InviteReplyData(inviteId: id, user: user, accept: accept).encode(to: encoder)
        case .youKicked(let by, let until): try KickedData(by: by, until: until).encode(to: encoder)
        case .youChatMuted(let until): try MutedData(until: until).encode(to: encoder)
        case .chatMessage(let message): try message.encode(to: encoder)
        case .signal(let from, let type, let payload): try SignalData(from: from, type: type, payload: payload).encode(to: encoder)
        case .tokenExpiring(let expiresAt): try ExpiringData(expiresAt: expiresAt).encode(to: encoder)
        case .speakerLevels(let levels): try LevelsData(levels: levels).encode(to: encoder)
        case .networkQuality(let user, let up, let down): try QualityData(user: user, up: up, down: down).encode(to: encoder)
        case .youElsewhere: try EmptyData().encode(to: encoder)
        case .sessionEnded(let reason, let message): try EndedData(reason: reason, message: message).encode(to: encoder)
        case .messageNew(let message), .messageUpdated(let message): try message.encode(to: encoder)
        case .messageRead(let conversation, let user, let seq): try ReadData(conversation: conversation, user: user, seq: seq).encode(to: encoder)
        case .typing(let conversation, let user, let until):
            try TypingData(conversation: conversation, user: user, until: until).encode(to: encoder)
        case .conversationUpdated(let change): try change.encode(to: encoder)
        case .conversationRemoved(let conversation, let by, let reason):
            try RemovedData(conversation: conversation, by: by, reason: reason).encode(to: encoder)
        case .messageRejected(let conversation, let clientMsgId, let reason):
            try MessageRejectedData(conversation: conversation, clientMsgId: clientMsgId, reason: reason).encode(to: encoder)
        case .joinRequested(let request): try request.encode(to: encoder)
        case .joinDeclined(let conversation, let by): try DeclinedData(conversation: conversation, by: by).encode(to: encoder)
        case .presenceChanged(let presence): try presence.encode(to: encoder)
        case .seatEmoji(let index, let user, let pack, let item): try EmojiData(index: index, user: user, pack: pack, item: item).encode(to: encoder)
        case .giftSent(let gift): try gift.encode(to: encoder)
        case .logRequested(let request): try request.encode(to: encoder)
        case .unknown(_, let data): try data.encode(to: encoder)
        }
    }

    /// Decodes the data of the event named `name`; unknown names become `.unknown`.
    init(name: String, data decoder: any Decoder) throws {
        switch name {
        case "room.updated": self = .roomUpdated(try RoomData(from: decoder).room)
        case "room.ended": self = .roomEnded(reason: try ReasonData(from: decoder).reason)
        case "member.joined": self = .memberJoined(try MemberData(from: decoder).member)
        case "member.updated": self = .memberUpdated(try MemberData(from: decoder).member)
        case "member.left":
            let data = try LeftData(from: decoder)
            self = .memberLeft(user: data.user, reason: data.reason)
        case "seat.updated": self = .seatUpdated(try SeatsData(from: decoder).seats)
        case "members.changed":
            let data = try MembersChangedData(from: decoder)
            self = .membersChanged(
                joined: data.joined, joinedCount: data.joinedCount ?? data.joined.count, left: data.left, memberCount: data.memberCount)
        case "attr.updated":
            let data = try AttributesData(from: decoder)
            self = .attributesUpdated(set: data.set, deleted: data.deleted)
        case "request.received": self = .requestReceived(try RequestData(from: decoder).request)
        case "request.cancelled":
            let data = try RequestEndData(from: decoder)
            self = .requestCancelled(requestId: data.requestId, user: data.user, reason: data.reason)
        case "request.accepted":
            let data = try AcceptedData(from: decoder)
            self = .requestAccepted(requestId: data.requestId, index: data.index)
        case "request.rejected": self = .requestRejected(requestId: try RejectedData(from: decoder).requestId)
        case "seat.invited":
            let data = try InvitedData(from: decoder)
            self = .seatInvited(inviteId: data.inviteId, from: data.from, index: data.index)
        case "seat.inviteReplied":
            let data = try InviteReplyData(from: decoder)
            self = .inviteReplied(inviteId: data.inviteId, user: data.user, accept: data.accept)
        case "you.kicked":
            let data = try KickedData(from: decoder)
            self = .youKicked(by: data.by, until: data.until)
        case "you.chatMuted": self = .youChatMuted(until: try MutedData(from: decoder).until)
        case "chat.message": self = .chatMessage(try ChatMessage(from: decoder))
        case "signal":
            let data = try SignalData(from: decoder)
            self = .signal(from: data.from, type: data.type, payload: data.payload)
        case "token.expiring": self = .tokenExpiring(expiresAt: try ExpiringData(from: decoder).expiresAt)
        case "speaker.levels": self = .speakerLevels(try LevelsData(from: decoder).levels)
        case "network.quality":
            let data = try QualityData(from: decoder)
            self = .networkQuality(user: data.user, up: data.up, down: data.down)
        case "you.elsewhere": self = .youElsewhere
        case "session.ended":
            let data = try EndedData(from: decoder)
            self = .sessionEnded(reason: data.reason, message: data.message)
        case "msg.new": self = .messageNew(try ConversationMessage(from: decoder))
        case "msg.updated": self = .messageUpdated(try ConversationMessage(from: decoder))
        case "msg.read":
            let data = try ReadData(from: decoder)
            self = .messageRead(conversation: data.conversation, user: data.user, seq: data.seq)
        case "msg.typing":
            let data = try TypingData(from: decoder)
            self = .typing(conversation: data.conversation, user: data.user, until: data.until)
        case "conv.updated": self = .conversationUpdated(try ConversationChange(from: decoder))
        case "conv.removed":
            let data = try RemovedData(from: decoder)
            self = .conversationRemoved(conversation: data.conversation, by: data.by, reason: data.reason)
        case "msg.rejected":
            let data = try MessageRejectedData(from: decoder)
            self = .messageRejected(conversation: data.conversation, clientMsgId: data.clientMsgId, reason: data.reason)
        case "conv.request": self = .joinRequested(try JoinRequest(from: decoder))
        case "conv.declined":
            let data = try DeclinedData(from: decoder)
            self = .joinDeclined(conversation: data.conversation, by: data.by)
        case "presence.changed": self = .presenceChanged(try UserPresence(from: decoder))
        case "seat.emoji":
            let data = try EmojiData(from: decoder)
            self = .seatEmoji(index: data.index, user: data.user, pack: data.pack, item: data.item)
        case "gift.sent": self = .giftSent(try Gift(from: decoder))
        case "log.requested": self = .logRequested(try LogRequest(from: decoder))
        default: self = .unknown(name: name, data: try JSONValue(from: decoder))
        }
    }
}
