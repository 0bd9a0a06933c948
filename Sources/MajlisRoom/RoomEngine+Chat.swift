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

    mutating func sendSignal(_ caller: Caller, to target: SignalTarget, type: String, payload: JSONValue, out: inout RoomOutcome) throws(ProtocolError) {
        if payload.encodedByteCount > limits.payloadBytes {
            throw ProtocolError(.tooLarge, "payload is larger than \(limits.payloadBytes) bytes")
        }
        let event = ServerEvent.signal(from: caller.id, type: type, payload: payload)
        switch target {
        case .room:
            emit(.roomExcept(caller.id), event, &out)
        case .users(let users):
            let present = users.filter { members[$0] != nil }
            if !present.isEmpty { emit(.users(present), event, &out) }
        }
    }
}
