import MajlisProtocol

extension RoomEngine {
    /// Applies one command from `caller` at time `now` (Unix ms).
    ///
    /// `.create` is not handled here (a room is created with `init`); it answers `room_exists`.
    public mutating func handle(_ command: RoomCommand, from caller: Caller, now: Int64) -> RoomOutcome {
        var out = RoomOutcome()
        let seated = occupancy
        do {
            out.reply = .success(try apply(command, caller: caller, now: now, out: &out))
        } catch {
            // A failed command changes nothing: every op checks before it mutates.
            out = RoomOutcome(reply: .failure(error))
        }
        saveSeats(ifChangedFrom: seated, &out)
        return out
    }

    private mutating func apply(_ command: RoomCommand, caller: Caller, now: Int64, out: inout RoomOutcome) throws(ProtocolError) -> RoomReply {
        if command.requiresMembership, members[caller.id] == nil, !(caller.isOperator && Self.operatorMay(command)) {
            throw ProtocolError(.notInRoom, "you are not in room \(id)")
        }
        switch command {
        case .create:
            throw ProtocolError(.roomExists, "room \(id) exists")
        case .join:
            return try join(caller, now: now, out: &out)
        case .leave:
            removeMember(caller.id, reason: "left", kicked: false, now: now, out: &out)
            return .done
        case .sync:
            return .snapshot(snapshot(for: caller.id, now: now, asModerator: caller.isOperator))
        case .update(let title, let announcement, let mode, let seatCount):
            try update(caller, title: title, announcement: announcement, mode: mode, seatCount: seatCount, now: now, out: &out)
            return .done
        case .muteChatAll(let on):
            try requireModerator(caller)
            if chatMutedAll != on {
                chatMutedAll = on
                emit(.room, .roomUpdated(info), &out)
                out.effects.append(.saveRoom)
            }
            return .done
        case .allowEmoji(let on):
            try requireModerator(caller)
            if emojiOff == on {
                emojiOff = !on
                emit(.room, .roomUpdated(info), &out)
                out.effects.append(.saveRoom)
            }
            return .done
        case .end:
            guard caller.id == owner || caller.grants.admin else {
                throw ProtocolError(.forbidden, "only the owner or a server admin may end the room")
            }
            end(reason: "ended", out: &out)
            return .done
        case .takeSeat(let index):
            try takeSeat(caller, index: index, now: now, out: &out)
            return .done
        case .leaveSeat:
            guard let index = seatIndex(of: caller.id) else { throw ProtocolError(.notSeated, "you are not seated") }
            vacate(index, out: &out)
            return .done
        case .switchSeat(let to):
            try switchSeat(caller, to: to, out: &out)
            return .done
        case .lockSeat(let index, let locked, let kick):
            try lockSeat(caller, index: index, locked: locked, kick: kick, out: &out)
            return .done
        case .muteSeat(let index, let muted):
            try requireModerator(caller)
            try checkIndex(index)
            if seats[index].muted != muted {
                seats[index].muted = muted
                emit(.room, .seatUpdated([seats[index]]), &out)
                out.effects.append(.saveRoom)
            }
            return .done
        case .muteAllSeats(let muted, let membersMayUnmute):
            try requireModerator(caller)
            muteAll(muted, membersMayUnmute: membersMayUnmute, out: &out)
            return .done
        case .kickFromSeat(let index):
            try requireModerator(caller)
            try checkIndex(index)
            guard let user = seats[index].user else { throw ProtocolError(.notSeated, "seat \(index) is empty") }
            try requireMayActOn(user, caller: caller)
            vacate(index, out: &out)
            return .done
        case .inviteToSeat(let user, let index):
            return try invite(caller, user: user, index: index, now: now, out: &out)
        case .replyToInvite(let inviteId, let accept):
            try replyToInvite(caller, inviteId: inviteId, accept: accept, now: now, out: &out)
            return .done
        case .setMic(let on):
            guard let index = seatIndex(of: caller.id) else { throw ProtocolError(.notSeated, "you are not seated") }
            if seats[index].micOn != on {
                seats[index].micOn = on
                emit(.room, .seatUpdated([seats[index]]), &out)
            }
            return .done
        case .createRequest(let index):
            return try createRequest(caller, index: index, now: now, out: &out)
        case .cancelRequest(let requestId):
            guard let request = requests[requestId], request.user == caller.id else {
                throw ProtocolError(.requestNotFound, "you have no request \(requestId)")
            }
            endRequest(request, reason: "cancelled", out: &out)
            return .done
        case .acceptRequest(let requestId, let index):
            try acceptRequest(caller, requestId: requestId, index: index, now: now, out: &out)
            return .done
        case .rejectRequest(let requestId):
            try requireModerator(caller)
            guard let request = requests[requestId] else { throw ProtocolError(.requestNotFound, "no request \(requestId)") }
            emit(.user(request.user), .requestRejected(requestId: requestId), &out)
            endRequest(request, reason: "rejected", out: &out)
            return .done
        case .listMembers(let after, let limit):
            return listMembers(after: after, limit: limit, now: now)
        case .updateMember(let name, let avatar, let refusesOwnership):
            guard var record = members[caller.id] else { return .done }
            // Sent to every member: what the caller chose is charged to its budget.
            if name != nil || avatar != nil {
                try chargeBroadcast(caller, bytes: (name?.utf8.count ?? 0) + (avatar?.utf8.count ?? 0) + Self.eventOverhead, now: now)
            }
            if let name { record.name = claimName(name, for: caller.id, releasing: record.name) }
            if let avatar { record.avatar = avatar }
            if let refusesOwnership { record.refusesOwnership = refusesOwnership }
            if record != members[caller.id] {
                members[caller.id] = record
                emit(.room, .memberUpdated(member(record, now: now)), &out)
            }
            return .done
        case .setRole(let user, let role):
            try setRole(caller, user: user, role: role, now: now, out: &out)
            return .done
        case .transferOwner(let user):
            try transferOwner(caller, to: user, now: now, out: &out)
            return .done
        case .kickMember(let user, let banSeconds):
            return try kick(caller, user: user, banSeconds: banSeconds, now: now, out: &out)
        case .unban(let user):
            try requireModerator(caller)
            let lifted = bans.removeValue(forKey: user) != nil
            if lifted { out.effects.append(.saveBan(user: user, until: 0)) }
            return .unbanned(lifted: lifted)
        case .muteChat(let user, let seconds):
            try muteChat(caller, user: user, seconds: seconds, now: now, out: &out)
            return .done
        case .sendChat(let draft):
            return try sendChat(caller, draft: draft, now: now, out: &out)
        case .chatHistory(let before, let limit):
            return .history(before: before, limit: limit)
        case .giftLeaders(let since, let until, let limit):
            return .giftLeaders(since: since, until: until, limit: limit)
        case .attributes(let operations, let force, let atomic):
            return try applyAttributes(caller, operations: operations, force: force, atomic: atomic, now: now, out: &out)
        case .sendSignal(let target, let type, let payload):
            try sendSignal(caller, to: target, type: type, payload: payload, now: now, out: &out)
            return .done
        case .sendEmoji(let index, let pack, let item):
            try sendEmoji(caller, to: index, pack: pack, item: item, now: now, out: &out)
            return .done
        case .sendGift(let from, let to, let index, let pack, let item, let count, let key):
            return .gift(try sendGift(caller, from: from, to: to, index: index, pack: pack, item: item, count: count, key: key, now: now, out: &out))
        case .offerWebRTC(let sdp):
            return .webrtcOffer(sdp: sdp, seats: seats.count)
        }
    }

    /// The ops the server API may send for a room it is not a member of: moderation, settings,
    /// reading, chat and signals; not the ones that are about the caller's own place in the room.
    public static func operatorMay(_ command: RoomCommand) -> Bool {
        switch command {
        case .sync, .update, .muteChatAll, .allowEmoji, .end, .lockSeat, .muteSeat, .muteAllSeats, .kickFromSeat, .inviteToSeat, .acceptRequest,
            .rejectRequest, .listMembers, .setRole, .transferOwner, .kickMember, .unban, .muteChat, .sendChat, .chatHistory,
            .attributes, .sendSignal, .sendGift, .giftLeaders:
            return true
        case .create, .join, .leave, .takeSeat, .leaveSeat, .switchSeat, .replyToInvite, .setMic, .createRequest, .cancelRequest,
            .updateMember, .offerWebRTC, .sendEmoji:
            return false
        }
    }

    /// Bans in force at `now`: user and the Unix ms until which each holds.
    public func activeBans(now: Int64) -> [(user: String, until: Int64)] {
        bans.filter { $0.value > now }.map { (user: $0.key, until: $0.value) }.sorted { $0.user < $1.user }
    }

    /// The member `user` as others see it, if in the room.
    public func member(_ user: String, now: Int64) -> Member? {
        members[user].map { member($0, now: now) }
    }

    /// Appends an event; events that change shared state get the next `seq`.
    mutating func emit(_ audience: Audience, _ event: ServerEvent, _ out: inout RoomOutcome) {
        var number: Int64?
        if event.changesRoomState {
            seq += 1
            number = seq
        }
        out.deliveries.append(Delivery(audience: audience, seq: number, event: event))
    }

    func requireModerator(_ caller: Caller) throws(ProtocolError) {
        guard isModerator(caller.id) || caller.grants.admin else {
            throw ProtocolError(.forbidden, "only the owner or an admin may do that")
        }
    }

    /// Admins may not act on the owner; only the owner (or a server admin) may.
    func requireMayActOn(_ user: String, caller: Caller) throws(ProtocolError) {
        if user == owner && caller.id != owner && !caller.grants.admin {
            throw ProtocolError(.forbidden, "admins cannot act on the owner")
        }
    }

    func checkIndex(_ index: Int) throws(ProtocolError) {
        guard seats.indices.contains(index) else {
            throw ProtocolError(.seatOutOfRange, "seat \(index) is out of range 0...\(seats.count - 1)")
        }
    }
}
