import MajlisProtocol

extension RoomEngine {
    /// The lowest seat that is neither occupied nor locked.
    var lowestFreeSeat: Int? { seats.first { $0.state == .empty }?.index }

    /// Checks that `index` (or, when nil, some seat) can be taken; returns the seat.
    func seatToTake(_ index: Int?) throws(ProtocolError) -> Int {
        guard let index else {
            guard let free = lowestFreeSeat else { throw ProtocolError(.noFreeSeat, "every seat is taken or locked") }
            return free
        }
        try checkIndex(index)
        switch seats[index].state {
        case .locked: throw ProtocolError(.seatLocked, "seat \(index) is locked")
        case .occupied: throw ProtocolError(.seatOccupied, "seat \(index) is taken by \(seats[index].user ?? "")")
        case .empty: return index
        }
    }

    /// Seats `user` at `index` (known to be free), ending the user's pending request.
    mutating func seat(_ user: String, at index: Int, out: inout RoomOutcome) {
        seats[index].state = .occupied
        seats[index].user = user
        seats[index].micOn = true
        emit(.room, .seatUpdated([seats[index]]), &out)
        if let request = requests.values.first(where: { $0.user == user }) {
            endRequest(request, reason: "seated", out: &out)
        }
        invites = invites.filter { $0.value.user != user }
    }

    /// Empties an occupied seat, keeping its lock and host mute.
    mutating func vacate(_ index: Int, out: inout RoomOutcome) {
        seats[index].state = .empty
        seats[index].user = nil
        seats[index].micOn = false
        emit(.room, .seatUpdated([seats[index]]), &out)
    }

    mutating func takeSeat(_ caller: Caller, index: Int?, now: Int64, out: inout RoomOutcome) throws(ProtocolError) {
        if let index { try checkIndex(index) }
        if mode == .request && !isModerator(caller.id) {
            throw ProtocolError(.approvalRequired, "room \(id) is in request mode: use request.create")
        }
        if let current = seatIndex(of: caller.id) { throw ProtocolError(.alreadySeated, "you are on seat \(current)") }
        seat(caller.id, at: try seatToTake(index), out: &out)
    }

    mutating func switchSeat(_ caller: Caller, to index: Int, out: inout RoomOutcome) throws(ProtocolError) {
        guard let from = seatIndex(of: caller.id) else { throw ProtocolError(.notSeated, "you are not seated") }
        try checkIndex(index)
        if from == index { return }
        _ = try seatToTake(index)
        let micOn = seats[from].micOn
        seats[from].state = .empty
        seats[from].user = nil
        seats[from].micOn = false
        seats[index].state = .occupied
        seats[index].user = caller.id
        seats[index].micOn = micOn
        emit(.room, .seatUpdated([seats[from], seats[index]]), &out)
    }

    mutating func lockSeat(_ caller: Caller, index: Int, locked: Bool, kick: Bool, out: inout RoomOutcome) throws(ProtocolError) {
        try requireModerator(caller)
        try checkIndex(index)
        if !locked {
            if seats[index].state == .locked {
                seats[index].state = .empty
                emit(.room, .seatUpdated([seats[index]]), &out)
                out.effects.append(.saveRoom)
            }
            return
        }
        if seats[index].state == .locked { return }
        if let user = seats[index].user {
            guard kick else { throw ProtocolError(.seatOccupied, "seat \(index) is taken by \(user); lock with kick") }
            try requireMayActOn(user, caller: caller)
        }
        seats[index].state = .locked
        seats[index].user = nil
        seats[index].micOn = false
        emit(.room, .seatUpdated([seats[index]]), &out)
        out.effects.append(.saveRoom)
        invites = invites.filter { $0.value.index != index }
    }

    mutating func invite(_ caller: Caller, user: String, index: Int?, now: Int64, out: inout RoomOutcome) throws(ProtocolError) -> RoomReply {
        try requireModerator(caller)
        if let index {
            try checkIndex(index)
            if seats[index].state == .locked { throw ProtocolError(.seatLocked, "seat \(index) is locked") }
        }
        guard members[user] != nil else { throw ProtocolError(.notInRoom, "\(user) is not in room \(id)") }
        if let current = seatIndex(of: user) { throw ProtocolError(.alreadySeated, "\(user) is on seat \(current)") }
        let inviteId = makeId("i")
        invites[inviteId] = SeatInvite(id: inviteId, from: caller.id, user: user, index: index, expiresAt: now + limits.inviteLifetime)
        emit(.user(user), .seatInvited(inviteId: inviteId, from: caller.id, index: index), &out)
        return .done
    }

    mutating func replyToInvite(_ caller: Caller, inviteId: String, accept: Bool, now: Int64, out: inout RoomOutcome) throws(ProtocolError) {
        guard let invite = invites[inviteId], invite.user == caller.id, invite.expiresAt > now else {
            throw ProtocolError(.inviteNotFound, "no invite \(inviteId) for you")
        }
        if accept {
            if let current = seatIndex(of: caller.id) { throw ProtocolError(.alreadySeated, "you are on seat \(current)") }
            let index = try seatToTake(invite.index)
            invites[inviteId] = nil
            seat(caller.id, at: index, out: &out)
        } else {
            invites[inviteId] = nil
        }
        if members[invite.from] != nil {
            emit(.user(invite.from), .inviteReplied(inviteId: inviteId, user: caller.id, accept: accept), &out)
        }
    }
}

extension RoomEngine {
    /// `seat.muteAll`: with `membersMayUnmute`, muting turns every seated member's mic off (each
    /// may turn it on again); without, every seat is host-muted (lifted only by a moderator).
    /// Unmuting lifts every host mute. One `seat.updated` with the seats that changed.
    mutating func muteAll(_ muted: Bool, membersMayUnmute: Bool, out: inout RoomOutcome) {
        var changed: [Seat] = []
        var hostMutesChanged = false
        for index in seats.indices {
            var seat = seats[index]
            if muted && membersMayUnmute {
                seat.micOn = false
            } else if seat.muted != muted {
                seat.muted = muted
                hostMutesChanged = true
            }
            if seat != seats[index] {
                seats[index] = seat
                changed.append(seat)
            }
        }
        if !changed.isEmpty { emit(.room, .seatUpdated(changed), &out) }
        if hostMutesChanged { out.effects.append(.saveRoom) }
    }
}
