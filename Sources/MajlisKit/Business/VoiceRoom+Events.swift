import MajlisProtocol

extension VoiceRoom {
    /// Applies what the signaling client reports.
    func handle(_ event: SignalingEvent) async {
        switch event {
        case .connected:
            break
        case .connectionLost:
            if state.status == .joined { await change { $0.status = .reconnecting } }
        case .reconnected(let info):
            guard !moving, state.status == .reconnecting || state.status == .joined else { return }
            await recover(stillMember: info.rooms.contains(roomId))
        case .closed(let code, let reason):
            switch state.status {
            case .kicked, .ended, .left, .idle: break
            default:
                // Media stops before anyone is told: whoever sees the room is over sees it silent.
                await media.stop()
                await change { state in
                    switch state.status {
                    case .kicked, .ended, .left, .idle: return  // said meanwhile, with its own reason
                    default: state.status = code == CloseCode.kicked.rawValue ? .kicked(by: "", until: nil) : .failed(reason)
                    }
                }
            }
        case .event(let frame):
            guard frame.room == nil || frame.room == roomId else { return }
            await apply(frame)
        }
    }

    /// Back after a reconnect: resync, or join again if the server let the membership go (a
    /// restarted server, say); then a seat this member held, and its microphone, are taken again
    /// where the room allows it (a free seat, a room members may sit in).
    func recover(stillMember: Bool) async {
        let held = state.mySeat.map { index in (index: index, micOn: state.seats[index].micOn) }
        do {
            if stillMember {
                try await sync()
            } else {
                _ = try await join()
            }
            if let held, state.mySeat == nil, state.seats.indices.contains(held.index), state.seats[held.index].state == .empty {
                do {
                    try await takeSeat(held.index)
                    if held.micOn { try await setMic(on: true) }
                } catch {
                    logger.info("could not take seat \(held.index + 1) of \(roomId) again: \(error)")
                }
            }
            await loadRecentChat()
        } catch {
            if error.code == .notInRoom, (try? await join()) != nil { return }
            logger.warning("could not get room \(roomId) back: \(error)")
            await change { $0.status = .failed(error.description) }
        }
    }

    /// Resyncs once at a time when events were missed.
    func resync() async {
        guard !resyncing else { return }
        resyncing = true
        defer { resyncing = false }
        do {
            try await sync()
        } catch {
            logger.warning("resync of \(roomId) failed: \(error)")
        }
    }

    func apply(_ frame: EventFrame) async {
        if state.status == .joining {
            heldFrames.append(frame)
            return
        }
        if let seq = frame.seq {
            guard state.status == .joined || state.status == .reconnecting else { return }
            if seq <= state.seq { return }  // already in our copy
            if seq > state.seq + 1 {
                logger.info("room \(roomId): missed events \(state.seq + 1)..<\(seq); resyncing")
                await resync()
                return
            }
            state.seq = seq  // bookkeeping, published with the change the event makes (one state, never half applied)
        }
        let me = state.me
        switch frame.event {
        case .roomUpdated(let info):
            await change { state in
                state.room = info
                state.memberCount = info.memberCount
                if state.seats.count > info.seatCount { state.seats.removeLast(state.seats.count - info.seatCount) }
                while state.seats.count < info.seatCount { state.seats.append(Seat(index: state.seats.count)) }
                if info.owner == me { state.role = .owner } else if state.role == .owner { state.role = .admin }
            }
        case .roomEnded(let reason):
            await media.stop()
            await change { $0.status = .ended(reason: reason) }
        case .memberJoined(let member):
            await change { state in
                upsert(member, into: &state)
                state.memberCount += 1
                note(.joined, user: member.id, name: member.name, in: &state)
            }
        case .memberLeft(let user, let reason):
            await change { state in
                note(.left(reason: reason), user: user, name: state.member(user)?.name ?? user, in: &state)
                state.members.removeAll { $0.id == user }
                state.memberCount = max(0, state.memberCount - 1)
                state.requests.removeAll { $0.user == user }
                if user == me { state.status = .left }
            }
        case .memberUpdated(let member):
            await change { state in
                upsert(member, into: &state)
                if member.id == me {
                    state.role = member.role
                    state.chatMuted = member.chatMuted
                }
            }
        case .membersChanged(let joined, _, let left, let count):
            await change { state in
                for member in joined {
                    upsert(member, into: &state)
                    note(.joined, user: member.id, name: member.name, in: &state)
                }
                for user in left { note(.left(reason: "left"), user: user, name: state.member(user)?.name ?? user, in: &state) }
                state.members.removeAll { left.contains($0.id) }
                state.memberCount = count
                if left.contains(me) { state.status = .left }
            }
        case .seatUpdated(let seats):
            await change { state in
                for seat in seats where state.seats.indices.contains(seat.index) { state.seats[seat.index] = seat }
                for index in state.members.indices {
                    let id = state.members[index].id
                    state.members[index].seat = state.seats.first { $0.user == id }?.index
                }
            }
        case .attributesUpdated(let set, let deleted):
            await change { state in
                for (key, value) in set { state.attributes[key] = value }
                for key in deleted { state.attributes[key] = nil }
            }
        case .requestReceived(let request):
            await change { state in
                if !state.requests.contains(where: { $0.id == request.id }) { state.requests.append(request) }
            }
        case .requestCancelled(let requestId, let user, let reason):
            await change { state in
                state.requests.removeAll { $0.id == requestId }
                if user == me, state.myRequest?.id == requestId {
                    state.myRequest = nil
                    switch reason {
                    case "expired": state.requestStatus = .expired
                    case "cancelled": state.requestStatus = .cancelled
                    default: break  // answered ("accepted", "rejected") or moot ("seated", "left")
                    }
                }
            }
        case .requestAccepted(let requestId, let index):
            await change { state in
                state.requests.removeAll { $0.id == requestId }
                if state.myRequest?.id == requestId {
                    state.myRequest = nil
                    state.requestStatus = .accepted(index: index)
                }
            }
        case .requestRejected(let requestId):
            await change { state in
                state.requests.removeAll { $0.id == requestId }
                if state.myRequest?.id == requestId {
                    state.myRequest = nil
                    state.requestStatus = .rejected
                }
            }
        case .seatInvited(let inviteId, let from, let index):
            await change { $0.invite = RoomState.Invite(inviteId: inviteId, from: from, index: index) }
        case .youKicked(let by, let until):
            await media.stop()
            await change { $0.status = .kicked(by: by, until: until) }
        case .youElsewhere:
            // The user joined this room from another device, which has it now: here it is left.
            await media.stop()
            await change { $0.status = .left }
        case .youChatMuted(let until):
            await change { $0.chatMuted = until != nil }
        case .chatMessage(let message):
            await change { state in
                guard !state.chat.contains(where: { $0.msgId == message.msgId }) else { return }
                state.chat.append(message)
                if state.chat.count > chatLimit { state.chat.removeFirst(state.chat.count - chatLimit) }
                state.lastMsgId = max(state.lastMsgId, message.msgId)
            }
        case .tokenExpiring(let expiresAt):
            await change { $0.tokenExpiresAt = expiresAt }
        case .speakerLevels(let levels):
            await change { state in
                state.levels = Dictionary(levels.map { ($0.user, $0.level) }, uniquingKeysWith: max)
            }
        case .networkQuality(let user, let up, let down) where user == me:
            await change { $0.networkQuality = NetworkQuality(rawValue: max(up, down).rawValue) }
        case .signal(let from, let type, let payload):
            emit(.signal(from: from, type: type, payload: payload))
        case .seatEmoji(let index, let user, let pack, let item):
            emit(.seatEmoji(index: index, user: user, pack: pack, item: item))
        case .giftSent(let gift):
            emit(.giftSent(gift))
        case .inviteReplied, .unknown, .networkQuality, .messageNew, .messageUpdated, .messageRead, .typing, .conversationUpdated, .conversationRemoved,
            .messageRejected, .joinRequested, .joinDeclined, .presenceChanged, .logRequested:
            break
        case .sessionEnded:
            // The connection closes next (4001 or 4004, with the reason): the room ends then.
            break
        }
    }

    /// Keeps a join or leave notice (the latest `noticeLimit`).
    private func note(_ kind: RoomNotice.Kind, user: String, name: String, in state: inout RoomState) {
        state.notices.append(RoomNotice(kind: kind, user: user, name: name, at: clock.now()))
        if state.notices.count > noticeLimit { state.notices.removeFirst(state.notices.count - noticeLimit) }
    }

    private func upsert(_ member: Member, into state: inout RoomState) {
        if let index = state.members.firstIndex(where: { $0.id == member.id }) {
            state.members[index] = member
        } else {
            state.members.append(member)
        }
    }
}
