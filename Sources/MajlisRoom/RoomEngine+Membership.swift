import MajlisProtocol

extension RoomEngine {
    mutating func join(_ caller: Caller, now: Int64, out: inout RoomOutcome) throws(ProtocolError) -> RoomReply {
        guard caller.grants.join else { throw ProtocolError(.forbidden, "your token does not grant join") }
        if var record = members[caller.id] {
            // Already a member (a second join, or back after a drop): no new member event.
            away[caller.id] = nil
            record.grants = caller.grants
            if caller.grants.admin { serverAdmins.insert(caller.id) } else { serverAdmins.remove(caller.id) }
            let name = claimName(caller.name, for: caller.id, releasing: record.name)
            if record.name != name {
                record.name = name
                members[caller.id] = record
                emit(.roomExcept(caller.id), .memberUpdated(member(record, now: now)), &out)
            } else {
                members[caller.id] = record
            }
            if caller.id == owner { keepName(name, of: owner, &out) }
            return .snapshot(snapshot(for: caller.id, now: now))
        }
        if let until = bans[caller.id] {
            if until > now { throw ProtocolError(.banned, "you are banned from room \(id) until \(until)") }
            bans[caller.id] = nil
        }
        let limit = maxMembers > 0 ? min(maxMembers, limits.maxMembers) : limits.maxMembers
        if members.count >= limit && caller.id != owner && !caller.grants.admin {
            throw ProtocolError(.roomFull, "room \(id) is full (\(limit) members)")
        }
        let record = MemberRecord(
            id: caller.id, name: claimName(caller.name, for: caller.id, releasing: nil), avatar: "", grants: caller.grants, joinedAt: now,
            joinIndex: nextJoinIndex)
        nextJoinIndex += 1
        members[caller.id] = record
        joinOrder.append(caller.id)
        if caller.grants.admin { serverAdmins.insert(caller.id) }
        if isCoalescingMembers {
            pendingLeft.removeAll { $0 == caller.id }
            pendingJoined.append(caller.id)
            flushMembersIfDue(now: now, out: &out)
        } else {
            emit(.roomExcept(caller.id), .memberJoined(member(record, now: now)), &out)
        }
        if caller.id == owner { keepName(record.name, of: owner, &out) }
        return .snapshot(snapshot(for: caller.id, now: now))
    }

    /// The whole room as `user` sees it. Lists moderators and seated members, then the first
    /// `limits.snapshotOtherMembers` others; costs nothing per unlisted member, so joining a
    /// busy room costs what joining a small one does.
    /// `asModerator`: show what moderators see (the request queue) to a caller who is none.
    public func snapshot(for user: String, now: Int64, asModerator: Bool = false) -> RoomSnapshot {
        // The listed few are found through the owner, admins, seats and server admins, and the
        // others by walking the join order only as far as the first ones not listed.
        var listed = Set<String>()
        var ranked: [(rank: Int, joinIndex: Int, member: Member)] = []
        func rank(_ id: String, _ rank: Int) {
            guard let record = members[id], listed.insert(id).inserted else { return }
            ranked.append((rank, record.joinIndex, member(record, now: now)))
        }
        rank(owner, 0)
        for admin in admins { rank(admin, 1) }
        for seat in seats { if let seated = seat.user { rank(seated, 2) } }
        for admin in serverAdmins { rank(admin, 2) }
        var others: [Member] = []
        for id in joinOrder {
            if others.count >= limits.snapshotOtherMembers { break }
            guard !listed.contains(id), let record = members[id] else { continue }
            others.append(member(record, now: now))
        }
        let first = ranked.sorted { ($0.rank, $0.joinIndex) < ($1.rank, $1.joinIndex) }.map(\.member)
        let moderator = asModerator || isModerator(user)
        let ownRequest = requestOrder.lazy.compactMap { self.requests[$0] }.first { $0.user == user }
        return RoomSnapshot(
            room: info, seq: seq, seats: seats, members: first + others,
            attributes: attributes.mapValues { AttributeValue(value: $0.value, owner: $0.owner) },
            me: SelfState(role: role(of: user), seat: seatIndex(of: user), chatMuted: isChatMuted(user, now: now), request: ownRequest),
            requests: moderator ? requestOrder.compactMap { requests[$0] } : [],
            chat: .init(lastMsgId: lastMsgId))
    }

    /// Where the member `user` stands in `joinOrder`, found by bisection: join indexes rise
    /// along it (an invariant), so a leave costs a search, not a walk, and a crowd leaving a
    /// room of 10,000 is not quadratic.
    func joinPosition(of user: String) -> Int? {
        guard let target = members[user]?.joinIndex else { return nil }
        var low = 0
        var high = joinOrder.count
        while low < high {
            let middle = (low + high) / 2
            if (members[joinOrder[middle]]?.joinIndex ?? .max) < target { low = middle + 1 } else { high = middle }
        }
        return low < joinOrder.count && joinOrder[low] == user ? low : nil
    }

    func listMembers(after: String?, limit: Int, now: Int64) -> RoomReply {
        var start = 0
        if let after, let position = joinPosition(of: after) { start = position + 1 }
        let end = min(joinOrder.count, start + limit)
        let page = joinOrder[start..<end].compactMap { members[$0].map { member($0, now: now) } }
        return .members(page, next: end < joinOrder.count ? joinOrder[end - 1] : nil)
    }

    /// Removes a member with everything that hangs on membership: seat, request, invites,
    /// deleteOnLeave attributes.
    mutating func removeMember(_ user: String, reason: String, kicked: Bool, now: Int64, out: inout RoomOutcome) {
        guard members[user] != nil else { return }
        if let index = seatIndex(of: user) { vacate(index, out: &out) }
        if let request = requests.values.first(where: { $0.user == user }) {
            endRequest(request, reason: "left", out: &out)
        }
        invites = invites.filter { $0.value.user != user }
        let owned = attributes.filter { $0.value.owner == user && $0.value.deleteOnLeave }.keys.sorted()
        if !owned.isEmpty {
            for key in owned { attributes[key] = nil }
            emit(.room, .attributesUpdated(set: [:], deleted: owned), &out)
        }
        let coalescing = isCoalescingMembers
        if let name = members[user]?.name, nameHolders[DisplayName.comparisonKey(name)] == user {
            nameHolders[DisplayName.comparisonKey(name)] = nil
        }
        if let position = joinPosition(of: user) { joinOrder.remove(at: position) }
        members[user] = nil
        away[user] = nil
        serverAdmins.remove(user)
        chatBuckets[user] = nil
        forgetRefilledBudgets(now: now)
        if coalescing {
            if let position = pendingJoined.firstIndex(of: user) {
                pendingJoined.remove(at: position)  // never announced: nothing to take back
            } else {
                pendingLeft.append(user)
            }
            flushMembersIfDue(now: now, out: &out)
        } else {
            emit(.room, .memberLeft(user: user, reason: reason), &out)
        }
        out.effects.append(.memberRemoved(user: user, kicked: kicked, reason: reason))
    }

    /// Busy rooms (or rooms with announcements pending) batch joins and leaves.
    var isCoalescingMembers: Bool {
        members.count > limits.coalesceMembersAbove || !pendingJoined.isEmpty || !pendingLeft.isEmpty
    }

    /// Announces pending joins and leaves in one `members.changed` if the last was long enough ago.
    mutating func flushMembersIfDue(now: Int64, out: inout RoomOutcome) {
        guard !pendingJoined.isEmpty || !pendingLeft.isEmpty, now - lastMembersFlush >= limits.membersChangedInterval else { return }
        let joined = pendingJoined.suffix(limits.membersChangedListed).compactMap { members[$0].map { member($0, now: now) } }
        emit(.room, .membersChanged(joined: joined, joinedCount: pendingJoined.count, left: pendingLeft, memberCount: members.count), &out)
        pendingJoined = []
        pendingLeft = []
        lastMembersFlush = now
    }

    /// Ends the room: everyone is told, and the driver forgets it.
    mutating func end(reason: String, out: inout RoomOutcome) {
        pendingJoined = []
        pendingLeft = []
        emit(.room, .roomEnded(reason: reason), &out)
        for user in joinOrder { out.effects.append(.memberRemoved(user: user, kicked: false, reason: "ended")) }
        members = [:]
        serverAdmins = []
        nameHolders = [:]
        joinOrder = []
        requests = [:]
        requestOrder = []
        invites = [:]
        attributes = [:]
        for index in seats.indices where seats[index].state == .occupied {
            seats[index] = Seat(index: index, muted: seats[index].muted)
        }
        out.effects.append(.deleteRoom)
    }

    mutating func update(
        _ caller: Caller, title: String?, announcement: String?, mode: RoomMode?, seatCount: Int?, now: Int64,
        out: inout RoomOutcome
    ) throws(ProtocolError) {
        try requireModerator(caller)
        if title != nil || announcement != nil {
            try chargeBroadcast(caller, bytes: (title?.utf8.count ?? 0) + (announcement?.utf8.count ?? 0) + Self.eventOverhead, now: now)
        }
        if let seatCount, seatCount < seats.count,
            let taken = seats[seatCount...].first(where: { $0.state == .occupied })
        {
            throw ProtocolError(.seatOccupied, "seat \(taken.index) is taken by \(taken.user ?? "")")
        }
        let before = info
        if let title { self.title = title }
        if let announcement { self.announcement = announcement }
        if let mode { self.mode = mode }
        if let seatCount {
            if seatCount < seats.count {
                seats.removeSubrange(seatCount...)
                invites = invites.filter { ($0.value.index ?? 0) < seatCount }
                for request in requests.values where (request.index ?? 0) >= seatCount {
                    requests[request.id]?.index = nil
                }
            } else {
                seats += (seats.count..<seatCount).map { Seat(index: $0) }
            }
        }
        if info != before {
            emit(.room, .roomUpdated(info), &out)
            out.effects.append(.saveRoom)
        }
    }

    mutating func setRole(_ caller: Caller, user: String, role: Role, now: Int64, out: inout RoomOutcome) throws(ProtocolError) {
        guard caller.id == owner || caller.grants.admin else { throw ProtocolError(.forbidden, "only the owner may change roles") }
        guard let record = members[user] else { throw ProtocolError(.notInRoom, "\(user) is not in room \(id)") }
        guard user != owner else { throw ProtocolError(.forbidden, "the owner's role changes only by member.transferOwner") }
        let changed = role == .admin ? admins.insert(user).inserted : admins.remove(user) != nil
        if changed {
            emit(.room, .memberUpdated(member(record, now: now)), &out)
            out.effects.append(.saveRoom)
        }
    }

    mutating func transferOwner(_ caller: Caller, to user: String, now: Int64, out: inout RoomOutcome) throws(ProtocolError) {
        guard caller.id == owner || caller.grants.admin else { throw ProtocolError(.forbidden, "only the owner may transfer ownership") }
        guard let record = members[user] else { throw ProtocolError(.notInRoom, "\(user) is not in room \(id)") }
        guard user != owner else { return }
        guard !record.refusesOwnership else { throw ProtocolError(.forbidden, "\(user) has refused to be handed room \(id)") }
        let previous = owner
        owner = user
        admins.remove(user)
        admins.insert(previous)
        knownNames[user] = record.name
        emit(.room, .roomUpdated(info), &out)
        if let old = members[previous] { emit(.room, .memberUpdated(member(old, now: now)), &out) }
        emit(.room, .memberUpdated(member(record, now: now)), &out)
        out.effects.append(.saveRoom)
    }

    mutating func kick(_ caller: Caller, user: String, banSeconds: Int, now: Int64, out: inout RoomOutcome) throws(ProtocolError) -> RoomReply {
        try requireModerator(caller)
        guard user != caller.id else { throw ProtocolError(.badRequest, "you cannot kick yourself") }
        if !caller.grants.admin && caller.id != owner && role(of: user).isModerator {
            throw ProtocolError(.forbidden, "admins cannot kick the owner or other admins")
        }
        if user == owner && !caller.grants.admin { throw ProtocolError(.forbidden, "the owner cannot be kicked") }
        guard members[user] != nil || banSeconds > 0 else { throw ProtocolError(.notInRoom, "\(user) is not in room \(id)") }
        var until: Int64?
        if banSeconds > 0 {
            let end = now + Duration.seconds(banSeconds).milliseconds
            bans[user] = end
            until = end
            out.effects.append(.saveBan(user: user, until: end))
            if let name = members[user]?.name { keepName(name, of: user, &out) }
        }
        let present = members[user] != nil
        if present {
            emit(.user(user), .youKicked(by: caller.id, until: until), &out)
            removeMember(user, reason: "kicked", kicked: true, now: now, out: &out)
        }
        return .kicked(removed: present, until: until)
    }

    mutating func muteChat(_ caller: Caller, user: String, seconds: Int, now: Int64, out: inout RoomOutcome) throws(ProtocolError) {
        try requireModerator(caller)
        if !caller.grants.admin && caller.id != owner && role(of: user).isModerator && user != caller.id {
            throw ProtocolError(.forbidden, "admins cannot mute the owner or other admins")
        }
        guard let record = members[user] else { throw ProtocolError(.notInRoom, "\(user) is not in room \(id)") }
        let wasMuted = isChatMuted(user, now: now)
        let until: Int64? = seconds > 0 ? now + Duration.seconds(seconds).milliseconds : nil
        chatMutes[user] = until
        emit(.user(user), .youChatMuted(until: until), &out)
        if wasMuted != (until != nil) { emit(.room, .memberUpdated(member(record, now: now)), &out) }
    }

    /// The member's connection dropped: membership and seat wait `limits.resumeGrace` for a resume.
    public mutating func disconnect(_ user: String, now: Int64) {
        if members[user] != nil { away[user] = now }
    }

    /// The member came back (resume) before the grace period ended.
    public mutating func reconnect(_ user: String) {
        away[user] = nil
    }

    /// Removes a member for good (the connection left without `room.leave`, e.g. `bye`).
    public mutating func drop(_ user: String, reason: String, now: Int64) -> RoomOutcome {
        var out = RoomOutcome()
        let seated = occupancy
        removeMember(user, reason: reason, kicked: false, now: now, out: &out)
        saveSeats(ifChangedFrom: seated, &out)
        return out
    }

    /// Ends the room from outside (the HTTP API, an operator).
    public mutating func terminate(reason: String) -> RoomOutcome {
        var out = RoomOutcome()
        end(reason: reason, out: &out)
        return out
    }

    /// The name of the server's own messages, as names are compared.
    static let systemNameKey = DisplayName.comparisonKey("System")

    /// The name `user` is shown with when it asks for `wanted` (its id when `wanted` is empty),
    /// letting go of `old`: `wanted` if no other member holds it, else `wanted (user)`. "System"
    /// belongs to the server's own messages (user `system`): anyone else asking for it is told apart.
    mutating func claimName(_ wanted: String, for user: String, releasing old: String?) -> String {
        if let old, nameHolders[DisplayName.comparisonKey(old)] == user { nameHolders[DisplayName.comparisonKey(old)] = nil }
        let name = wanted.isEmpty ? user : wanted
        let key = DisplayName.comparisonKey(name)
        if key == Self.systemNameKey && user != "system" { return "\(name) (\(user))" }
        if let holder = nameHolders[key], holder != user { return "\(name) (\(user))" }
        nameHolders[key] = user
        return name
    }
}
