import MajlisProtocol

/// One room's state machine: `(state, command, caller, now) -> (new state, reply, events, effects)`.
///
/// Pure and deterministic: no I/O, no clock (time comes in as Unix milliseconds), no locks. The
/// driver serializes calls (one room, one executor), so every race has exactly one winner.
///
/// Invariants, checked by `invariantViolations()` and kept by every transition:
/// - `seats.count == seatCount`, and `seats[i].index == i`;
/// - a seat is occupied exactly when it has a user; a locked seat is empty;
/// - a user holds at most one seat, and only while a member;
/// - a pending request belongs to a member who is not seated, one request per user;
/// - `seq` grows by exactly one per event that changes shared state;
/// - an admin never unseats, kicks or mutes the owner (only the owner acts on the owner's role);
/// - a display name is held by at most one member.
public struct RoomEngine: Sendable {
    public let id: String
    public internal(set) var title: String
    public internal(set) var owner: String
    public internal(set) var mode: RoomMode
    public internal(set) var announcement: String
    public internal(set) var chatMutedAll: Bool
    /// Whether only the owner and admins may send seat emoji (`room.emoji`).
    public internal(set) var emojiOff = false
    public let createdAt: Int64
    public internal(set) var maxMembers: Int
    public internal(set) var seats: [Seat]
    /// The last event number handed out.
    public internal(set) var seq: Int64 = 0
    /// The last chat message id handed out.
    public internal(set) var lastMsgId: Int64 = 0
    public let limits: RoomLimits

    var admins: Set<String>
    /// Banned users and the Unix ms until which the ban holds.
    var bans: [String: Int64] = [:]
    /// Users whose chat is muted, and until when.
    var chatMutes: [String: Int64] = [:]
    var members: [String: MemberRecord] = [:]
    /// Members whose connection dropped, and since when (Unix ms): kept apart from `members`
    /// so finding the next resume deadline costs the away members, not the whole room.
    var away: [String: Int64] = [:]
    /// Member ids in join order.
    var joinOrder: [String] = []
    /// The join position the next new member gets (`MemberRecord.joinIndex`).
    var nextJoinIndex = 0
    /// Members whose token grants server-wide admin (listed first in snapshots).
    var serverAdmins: Set<String> = []
    /// Which member holds each display name (by `DisplayName.comparisonKey`): a later member
    /// with the same name is shown with its user id, so no one can pass for another.
    var nameHolders: [String: String] = [:]
    /// The last display names of the owner and of banned users, kept while they are away
    /// (`StoredRoom.names`).
    var knownNames: [String: String] = [:]
    var requests: [String: SeatRequest] = [:]
    var requestOrder: [String] = []
    var invites: [String: SeatInvite] = [:]
    var attributes: [String: AttributeRecord] = [:]
    var chatBuckets: [String: TokenBucket] = [:]
    /// What each member may still cause of room-wide events (`RoomLimits.broadcastBytesPerSecond`);
    /// kept after it leaves until refilled, so leaving and joining again does not refill it.
    var broadcastBuckets: [String: TokenBucket] = [:]
    /// Answers to recent `chat.send`s by (user, clientMsgId), oldest first in `sentOrder`.
    var sentChats: [String: (msgId: Int64, ts: Int64)] = [:]
    var sentOrder: [String] = []
    var nextLocalId = 1
    /// Joins and leaves not yet announced (busy rooms announce them in batches).
    var pendingJoined: [String] = []
    var pendingLeft: [String] = []
    var lastMembersFlush: Int64 = 0

    /// A new room, created by `owner`.
    public init(id: String, settings: RoomSettings, owner: String, now: Int64, limits: RoomLimits = RoomLimits()) {
        self.id = id
        self.title = settings.title
        self.owner = owner
        self.mode = settings.mode
        self.announcement = settings.announcement
        self.chatMutedAll = false
        self.createdAt = now
        self.maxMembers = settings.maxMembers
        self.seats = (0..<settings.seatCount).map { Seat(index: $0) }
        self.admins = []
        self.limits = limits
    }

    /// A room restored from the store. Its seated members (`stored.occupants`) are back as
    /// members away since `restoredAt`: each holds its seat for the resume grace, as after a
    /// dropped connection, and a join within it finds the seat its own (nil: nobody is restored).
    public init(
        stored: StoredRoom, bans: [String: Int64], lastMsgId: Int64, recentChats: [(user: String, clientMsgId: String, msgId: Int64, ts: Int64)],
        attributes: [String: AttributeValue] = [:], limits: RoomLimits = RoomLimits(), restoredAt: Int64? = nil
    ) {
        self.init(
            id: stored.id,
            settings: RoomSettings(
                title: stored.title, seatCount: stored.seatCount, mode: stored.mode, announcement: stored.announcement,
                maxMembers: stored.maxMembers),
            owner: stored.owner, now: stored.createdAt, limits: limits)
        chatMutedAll = stored.chatMutedAll
        emojiOff = stored.emojiOff ?? false
        for index in stored.lockedSeats where seats.indices.contains(index) { seats[index].state = .locked }
        for index in stored.mutedSeats where seats.indices.contains(index) { seats[index].muted = true }
        admins = Set(stored.admins)
        self.bans = bans
        knownNames = stored.names ?? [:]
        self.lastMsgId = lastMsgId
        for chat in recentChats { rememberChat(user: chat.user, clientMsgId: chat.clientMsgId, msgId: chat.msgId, ts: chat.ts) }
        self.attributes = attributes.mapValues { AttributeRecord(value: $0.value, owner: $0.owner, deleteOnLeave: false) }
        guard let restoredAt else { return }
        for occupant in stored.occupants ?? [] where seats.indices.contains(occupant.seat) && seats[occupant.seat].state == .empty {
            guard members[occupant.user] == nil, Identifier.isValid(occupant.user) else { continue }
            members[occupant.user] = MemberRecord(
                id: occupant.user, name: claimName(occupant.name, for: occupant.user, releasing: nil), avatar: occupant.avatar, grants: Grants(),
                joinedAt: restoredAt, joinIndex: nextJoinIndex)
            nextJoinIndex += 1
            joinOrder.append(occupant.user)
            seats[occupant.seat].state = .occupied
            seats[occupant.seat].user = occupant.user
            seats[occupant.seat].micOn = true
            away[occupant.user] = restoredAt
        }
    }

    /// Who sits where (seat index to user), as the store keeps it.
    var occupancy: [Int: String] {
        var taken: [Int: String] = [:]
        for seat in seats { if seat.state == .occupied, let user = seat.user { taken[seat.index] = user } }
        return taken
    }

    /// Asks the store to save the room when who sits where changed since `before`.
    func saveSeats(ifChangedFrom before: [Int: String], _ out: inout RoomOutcome) {
        guard occupancy != before, !out.effects.contains(.saveRoom), !out.effects.contains(.deleteRoom) else { return }
        out.effects.append(.saveRoom)
    }

    /// What the store keeps of this room.
    public var stored: StoredRoom {
        StoredRoom(
            id: id, title: title, owner: owner, mode: mode, seatCount: seats.count, announcement: announcement,
            chatMutedAll: chatMutedAll, createdAt: createdAt, maxMembers: maxMembers,
            lockedSeats: seats.filter { $0.state == .locked }.map(\.index),
            mutedSeats: seats.filter(\.muted).map(\.index), admins: admins.sorted(),
            occupants: occupancy.isEmpty
                ? nil
                : occupancy.sorted { $0.key < $1.key }.map { seat, user in
                    StoredRoom.Occupant(seat: seat, user: user, name: members[user]?.name ?? user, avatar: members[user]?.avatar ?? "")
                },
            names: { let kept = knownNames.filter { $0.key == owner || bans[$0.key] != nil }; return kept.isEmpty ? nil : kept }(),
            emojiOff: emojiOff ? true : nil)
    }

    /// `user`'s display name: as a member now, or as last seen if the room keeps it (its owner, a
    /// banned user); nil when the room does not know it.
    public func name(of user: String) -> String? { members[user]?.name ?? knownNames[user] }

    /// Keeps `name` as `user`'s (the owner's, a banned user's) and has the room saved when it changed.
    mutating func keepName(_ name: String, of user: String, _ out: inout RoomOutcome) {
        guard knownNames[user] != name else { return }
        knownNames[user] = name
        if !out.effects.contains(.saveRoom) { out.effects.append(.saveRoom) }
    }

    /// The room's public settings and counters.
    public var info: RoomInfo {
        RoomInfo(
            id: id, title: title, owner: owner, mode: mode, seatCount: seats.count, announcement: announcement,
            chatMutedAll: chatMutedAll, createdAt: createdAt, memberCount: members.count, maxMembers: maxMembers, emojiOff: emojiOff ? true : nil)
    }

    /// Ids of the current members, in join order.
    public var memberIds: [String] { joinOrder }

    /// Whether `user` is a member (connected or waiting for resume).
    public func isMember(_ user: String) -> Bool { members[user] != nil }

    /// The seat `user` holds, if any.
    public func seatIndex(of user: String) -> Int? {
        seats.firstIndex { $0.user == user }
    }

    /// Who may be heard: seated, seat not host-muted, mic on, and granted `publish`.
    public func mayPublish(_ user: String) -> Bool {
        guard let index = seatIndex(of: user), let member = members[user] else { return false }
        return !seats[index].muted && seats[index].micOn && member.grants.publish
    }

    func role(of user: String) -> Role {
        if user == owner { return .owner }
        return admins.contains(user) ? .admin : .member
    }

    /// Owner, admins, and members with the server-wide admin grant.
    func isModerator(_ user: String) -> Bool {
        role(of: user).isModerator || members[user]?.grants.admin == true
    }

    /// The ids that moderate the room right now.
    public var moderatorIds: [String] { joinOrder.filter { isModerator($0) } }

    func isChatMuted(_ user: String, now: Int64) -> Bool {
        if let until = chatMutes[user], until > now { return true }
        return false
    }

    func member(_ record: MemberRecord, now: Int64) -> Member {
        Member(
            id: record.id, name: record.name, avatar: record.avatar, role: role(of: record.id),
            seat: seatIndex(of: record.id), chatMuted: isChatMuted(record.id, now: now), joinedAt: record.joinedAt,
            refusesOwnership: record.refusesOwnership ? true : nil)
    }

    mutating func makeId(_ prefix: String) -> String {
        defer { nextLocalId += 1 }
        return "\(prefix)\(nextLocalId)"
    }

    mutating func rememberChat(user: String, clientMsgId: String, msgId: Int64, ts: Int64) {
        let key = user + "\u{0}" + clientMsgId
        if sentChats.updateValue((msgId, ts), forKey: key) == nil { sentOrder.append(key) }
        if sentOrder.count >= 2 * limits.rememberedClientMessages {
            let excess = sentOrder.count - limits.rememberedClientMessages
            for old in sentOrder[..<excess] { sentChats[old] = nil }
            sentOrder.removeSubrange(..<excess)
        }
    }
}
