import MajlisProtocol

/// Work the room asks its driver to carry out after a transition.
public enum RoomEffect: Sendable, Equatable {
    /// The stored part of the room changed: save `StoredRoom`.
    case saveRoom
    /// Store a ban (Unix ms until which it holds).
    case saveBan(user: String, until: Int64)
    /// Store an accepted chat message before answering.
    case storeChat(ChatMessage, clientMsgId: String)
    /// The user is no longer a member: `reason` as in `member.left` (`left`, `kicked`,
    /// `timeout`, ...; `ended` when the room ended).
    case memberRemoved(user: String, kicked: Bool, reason: String)
    /// Attributes that outlive their setter's presence changed: store `set`, forget `deleted`
    /// (keys that are gone, or now vanish when their owner leaves and so are not kept).
    case saveAttributes(set: [String: AttributeValue], deleted: [String])
    /// Store a gift under its key before answering (a key stored already: nothing more counts).
    case storeGift(Gift, key: String)
    /// The room is over: forget it.
    case deleteRoom
}
