/// Limits a room enforces; the server sets them from its configuration.
public struct RoomLimits: Sendable, Equatable {
    /// Members per room when the room does not set a lower `maxMembers`.
    public var maxMembers = 100_000
    /// Longest chat text, in characters.
    public var chatTextLength = 500
    /// Largest chat or signal payload, in bytes of JSON.
    public var payloadBytes = 4096
    /// Chat messages a user may send in a burst, and per second after it.
    public var chatBurst = 10
    public var chatPerSecond = 2.0
    /// Bytes of room-wide events (signals, attribute changes, names, avatars, titles and
    /// announcements: what a member chose the server sends everyone) one member may cause a second,
    /// after a burst, each sent to every member it names: one member makes the server send at
    /// most this much to each other member (a 4 KiB signal four times a second, a value of
    /// 8 KiB twice). An app's signals (reactions, game moves, cursors) are a few hundred bytes
    /// a few times a second. A server admin's are not counted.
    public var broadcastBytesPerSecond = 16_384
    public var broadcastBurstBytes = 65_536
    /// Attribute keys per room, bytes per key and per value.
    public var attributeKeys = 128
    public var attributeKeyBytes = 128
    public var attributeValueBytes = 8192
    /// Bytes of keys and values one member may own in a room's attributes (a server admin is
    /// not limited).
    public var attributeBytesPerMember = 65_536
    /// Keys one member who is neither the owner nor an admin may own in a room; the last quarter
    /// of `attributeKeys` only the owner and admins may take (so no member, nor a few together,
    /// can leave them none). A member's set past either is `too_large`.
    public static let attributeKeysPerMember = 16
    /// How long a seat invite and a seat request stay valid, in milliseconds.
    public var inviteLifetime: Int64 = 60_000
    public var requestLifetime: Int64 = 300_000
    /// How long a dropped member keeps membership and seat, waiting for `resume`.
    public var resumeGrace: Int64 = 30_000
    /// How many of the others (neither moderators nor seated) a snapshot lists.
    public var snapshotOtherMembers = 100
    /// Above this many members, joins and leaves are announced together in `members.changed`,
    /// at most once per `membersChangedInterval` milliseconds, instead of one event each.
    public var coalesceMembersAbove = 200
    public var membersChangedInterval: Int64 = 500
    /// How many of the members who joined a `members.changed` lists (the most recent ones).
    public var membersChangedListed = 20
    /// How many recent `clientMsgId`s are remembered for deduplication.
    public var rememberedClientMessages = 10_000

    public init() {}
}
