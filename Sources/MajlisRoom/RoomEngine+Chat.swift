import MajlisProtocol

extension RoomEngine {
    mutating func sendChat(_ caller: Caller, draft: ChatDraft, now: Int64, out: inout RoomOutcome) throws(ProtocolError) -> RoomReply {
        guard caller.grants.chat else { throw ProtocolError(.forbidden, "your token does not grant chat") }
        if let first = sentChats[caller.id + "\u{0}" + draft.clientMsgId] {
            return .chatPosted(msgId: first.msgId, ts: first.ts)
        }
        if chatMutedAll && !isModerator(caller.id) { throw ProtocolError(.chatMuted, "chat is muted for everyone") }
        if let until = chatMutes[caller.id], until > now {
            throw ProtocolError(.chatMuted, "your chat is muted until \(until)")
        }
        if let text = draft.text, text.count > limits.chatTextLength {
            throw ProtocolError(.tooLarge, "text is longer than \(limits.chatTextLength) characters")
        }
        if let payload = draft.payload, payload.encodedByteCount > limits.payloadBytes {
            throw ProtocolError(.tooLarge, "payload is larger than \(limits.payloadBytes) bytes")
        }
        var bucket = chatBuckets[caller.id] ?? TokenBucket(capacity: limits.chatBurst, now: now)
        guard bucket.take(capacity: limits.chatBurst, perSecond: limits.chatPerSecond, now: now) else {
            chatBuckets[caller.id] = bucket
            throw ProtocolError(.rateLimited, "too many messages: at most \(limits.chatPerSecond) per second")
        }
        chatBuckets[caller.id] = bucket
        lastMsgId += 1
        let name = members[caller.id]?.name ?? caller.name
        let message = ChatMessage(
            msgId: lastMsgId, from: UserRef(id: caller.id, name: name), type: draft.type, text: draft.text,
            payload: draft.payload, ts: now)
        rememberChat(user: caller.id, clientMsgId: draft.clientMsgId, msgId: message.msgId, ts: now)
        out.effects.append(.storeChat(message, clientMsgId: draft.clientMsgId))
        emit(.room, .chatMessage(message), &out)
        return .chatPosted(msgId: message.msgId, ts: now)
    }

    mutating func sendSignal(_ caller: Caller, to target: SignalTarget, type: String, payload: JSONValue, now: Int64, out: inout RoomOutcome) throws(ProtocolError) {
        let size = payload.encodedByteCount
        if size > limits.payloadBytes {
            throw ProtocolError(.tooLarge, "payload is larger than \(limits.payloadBytes) bytes")
        }
        try chargeBroadcast(caller, bytes: size + type.utf8.count + Self.eventOverhead, now: now)
        let event = ServerEvent.signal(from: caller.id, type: type, payload: payload)
        switch target {
        case .room:
            emit(.roomExcept(caller.id), event, &out)
        case .users(let users):
            let present = users.filter { members[$0] != nil }
            if !present.isEmpty { emit(.users(present), event, &out) }
        }
    }

    /// `seat.emoji`: `seat.emoji` to every member (the sender too, so that every screen shows it
    /// at the same moment), under the room-wide budget, unless the room's emoji are off (the
    /// owner and admins may send them still). Which packs and items exist is the server's to
    /// check before.
    mutating func sendEmoji(_ caller: Caller, to index: Int, pack: String, item: String, now: Int64, out: inout RoomOutcome) throws(ProtocolError) {
        if emojiOff && !isModerator(caller.id) && !caller.isOperator { throw ProtocolError(.forbidden, "seat emoji are off in this room") }
        guard seats.indices.contains(index) else { throw ProtocolError(.badRequest, "the room has no seat \(index)") }
        try chargeBroadcast(caller, bytes: pack.utf8.count + item.utf8.count + Self.eventOverhead, now: now)
        emit(.room, .seatEmoji(index: index, user: caller.id, pack: pack, item: item), &out)
    }

    /// `gift.send`: `gift.sent` to every member, and the gift stored (its tallies are the store's).
    /// Only the app's backend sends gifts (it owns what they cost); the receiver is a member, or
    /// whoever sits on the seat named.
    mutating func sendGift(
        _ caller: Caller, from: String, to: String?, index: Int?, pack: String, item: String, count: Int, key: String, now: Int64, out: inout RoomOutcome
    ) throws(ProtocolError) -> Gift {
        guard caller.isOperator else { throw ProtocolError(.forbidden, "gifts are sent by the app's backend (POST /v1/rooms/ROOM/gifts)") }
        let receiver: String
        if let index {
            guard seats.indices.contains(index) else { throw ProtocolError(.seatOutOfRange, "the room has no seat \(index)") }
            guard let user = seats[index].user else { throw ProtocolError(.notInRoom, "no one sits on seat \(index)") }
            receiver = user
        } else if let to, members[to] != nil {
            receiver = to
        } else {
            throw ProtocolError(.notInRoom, "\(to ?? "") is not in room \(id)")
        }
        let gift = Gift(from: from, fromName: name(of: from) ?? from, to: receiver, index: index, pack: pack, item: item, count: count, ts: now)
        emit(.room, .giftSent(gift), &out)
        out.effects.append(.storeGift(gift, key: key))
        return gift
    }

    /// An event's bytes besides what a member chose (its name, room, seq, sender).
    static let eventOverhead = 96

    /// Charges `bytes` of room-wide events to `caller` (`RoomLimits.broadcastBytesPerSecond`);
    /// `rate_limited` when spent. One larger than the burst costs the whole burst.
    mutating func chargeBroadcast(_ caller: Caller, bytes: Int, now: Int64) throws(ProtocolError) {
        guard !caller.grants.admin else { return }
        let capacity = limits.broadcastBurstBytes
        var bucket = broadcastBuckets[caller.id] ?? TokenBucket(capacity: capacity, now: now)
        let allowed = bucket.take(min(bytes, capacity), capacity: capacity, perSecond: Double(limits.broadcastBytesPerSecond), now: now)
        broadcastBuckets[caller.id] = bucket
        guard allowed else {
            throw ProtocolError(
                .rateLimited, "too much sent to the room: at most \(limits.broadcastBytesPerSecond) bytes a second of signals, attributes, names and announcements")
        }
    }

    /// Forgets the budgets of members gone that have refilled (they would start full anyway).
    mutating func forgetRefilledBudgets(now: Int64) {
        let capacity = limits.broadcastBurstBytes
        for (user, bucket) in broadcastBuckets where members[user] == nil && bucket.isFull(capacity: capacity, perSecond: Double(limits.broadcastBytesPerSecond), now: now) {
            broadcastBuckets[user] = nil
        }
    }
}
