import MajlisProtocol

/// The data of a successful response.
public enum RoomReply: Sendable, Equatable, Encodable {
    /// `{}`.
    case done
    case snapshot(RoomSnapshot)
    case requestCreated(requestId: String)
    case chatPosted(msgId: Int64, ts: Int64)
    case members([Member], next: String?)
    case attributes(failed: [String])
    /// The caller may read history: the driver answers from the store.
    case history(before: Int64?, limit: Int)
    /// `member.kick`: whether the user was in the room and removed, and the end of its ban (Unix ms).
    case kicked(removed: Bool, until: Int64?)
    /// `member.unban`: whether there was a ban to lift.
    case unbanned(lifted: Bool)
    /// `gift.send`: the gift as the room showed it.
    case gift(Gift)
    /// The caller may read the room's gift leaderboard: the driver answers from the store.
    case giftLeaders(since: Int64, until: Int64, limit: Int)
    /// The caller may negotiate WebRTC media for a room of `seats` seats: the driver answers.
    case webrtcOffer(sdp: String, seats: Int)

    private enum Keys: String, CodingKey { case requestId, msgId, ts, members, next, failed, removed, until, lifted, gift }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .snapshot(let snapshot):
            try snapshot.encode(to: encoder)
        case .done, .history, .giftLeaders, .webrtcOffer:
            _ = encoder.container(keyedBy: Keys.self)
        case .requestCreated(let id):
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(id, forKey: .requestId)
        case .chatPosted(let msgId, let ts):
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(msgId, forKey: .msgId)
            try c.encode(ts, forKey: .ts)
        case .members(let members, let next):
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(members, forKey: .members)
            try c.encodeIfPresent(next, forKey: .next)
        case .kicked(let removed, let until):
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(removed, forKey: .removed)
            try c.encodeIfPresent(until, forKey: .until)
        case .unbanned(let lifted):
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(lifted, forKey: .lifted)
        case .attributes(let failed):
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(failed, forKey: .failed)
        case .gift(let gift):
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(gift, forKey: .gift)
        }
    }
}
