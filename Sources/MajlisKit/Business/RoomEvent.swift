import MajlisProtocol

/// What changed in a voice room, as an app reacts to it: derived from the difference between the
/// old and the new `RoomState` (so whatever path changed the state, the events agree with it),
/// plus the one-off happenings that are not state (custom signals).
public enum RoomEvent: Sendable, Equatable {
    case statusChanged(RoomState.Status)
    case roomChanged(RoomInfo)
    case memberJoined(Member)
    case memberLeft(Member)
    /// A member's name, role or chat mute changed.
    case memberChanged(Member)
    case seatChanged(Seat)
    /// This user's role changed.
    case roleChanged(Role)
    /// This user's request to speak moved on (pending, accepted, ...).
    case requestChanged(RoomState.RequestStatus?)
    /// The queue of requests the owner and admins answer changed.
    case requestsChanged([SeatRequest])
    case invited(RoomState.Invite)
    case chatReceived(ChatMessage)
    case chatMutedChanged(Bool)
    case attributesChanged(set: [String: AttributeValue], deleted: [String])
    case networkQualityChanged(NetworkQuality?)
    case tokenExpiring(at: Int64)
    /// A custom signal (gift, emoji, app command); not part of the state.
    case signal(from: String, type: String, payload: JSONValue)
    /// `user` sent emoji `item` of resource pack `pack` (its SHA-256 name) to seat `index`: show
    /// it on that seat now.
    case seatEmoji(index: Int, user: String, pack: String, item: String)
    /// The app's backend sent a gift (an item of a gift pack): show its effect, on
    /// `gift.index`'s seat when it went to a seat, else on `gift.to`.
    case giftSent(Gift)
    /// This subscriber fell this many events behind and they were not kept (it reads too slowly);
    /// the state stream still has everything.
    case missed(Int)

    /// The events that lead from `old` to `new`, in a fixed order: status, room, members, seats,
    /// this user, requests, chat, attributes, network. Joining reports only the status and the
    /// room (what was there before is the state, not news); a resync reports what it brought.
    public static func changes(from old: RoomState, to new: RoomState) -> [RoomEvent] {
        var events: [RoomEvent] = []
        if new.status != old.status { events.append(.statusChanged(new.status)) }
        if let room = new.room, room != old.room { events.append(.roomChanged(room)) }
        guard old.status != .idle && old.status != .joining else { return events }
        if new.members != old.members {
            let before = Dictionary(old.members.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let after = Set(new.members.map(\.id))
            for member in new.members {
                if let previous = before[member.id] {
                    if previous.name != member.name || previous.role != member.role || previous.chatMuted != member.chatMuted {
                        events.append(.memberChanged(member))
                    }
                } else {
                    events.append(.memberJoined(member))
                }
            }
            for member in old.members where !after.contains(member.id) { events.append(.memberLeft(member)) }
        }
        for seat in new.seats where !old.seats.indices.contains(seat.index) || old.seats[seat.index] != seat { events.append(.seatChanged(seat)) }
        if new.role != old.role { events.append(.roleChanged(new.role)) }
        if new.requestStatus != old.requestStatus { events.append(.requestChanged(new.requestStatus)) }
        if new.requests != old.requests { events.append(.requestsChanged(new.requests)) }
        if let invite = new.invite, invite != old.invite { events.append(.invited(invite)) }
        for message in new.chat where message.msgId > old.lastMsgId { events.append(.chatReceived(message)) }
        if new.chatMuted != old.chatMuted { events.append(.chatMutedChanged(new.chatMuted)) }
        if new.attributes != old.attributes {
            let set = new.attributes.filter { old.attributes[$0.key] != $0.value }
            let deleted = old.attributes.keys.filter { new.attributes[$0] == nil }.sorted()
            events.append(.attributesChanged(set: set, deleted: deleted))
        }
        if new.networkQuality != old.networkQuality { events.append(.networkQualityChanged(new.networkQuality)) }
        if let expiry = new.tokenExpiresAt, expiry != old.tokenExpiresAt { events.append(.tokenExpiring(at: expiry)) }
        return events
    }
}
