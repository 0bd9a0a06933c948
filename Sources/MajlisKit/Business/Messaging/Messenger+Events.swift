import MajlisProtocol

extension Messenger {
    /// What the signaling client reports: messaging events are applied; a reconnect syncs.
    func handle(_ event: SignalingEvent) async {
        switch event {
        case .reconnected:
            do { try await refresh() } catch { logger.info("messaging: sync after reconnect failed: \(error)") }
        case .event(let frame) where frame.room == nil:
            await apply(frame.event)
        default:
            break
        }
    }

    /// Applies one messaging event. A message past the next expected number syncs the gap first.
    func apply(_ event: ServerEvent) async {
        switch event {
        case .messageNew(let message):
            let expected = state.lastSeq(message.conversation) + 1
            if state.conversations[message.conversation] == nil {
                // A conversation not held yet (made by another's first message, or a group the
                // user was just put in): listed, and synced from its start.
                do { try await refresh() } catch { logger.info("messaging: refresh failed: \(error)") }
            } else if message.seq > expected {
                do { try await sync(message.conversation) } catch { logger.info("messaging: sync failed: \(error)") }
            }
            change { state in
                Self.insert(message, into: &state, readBy: me)
                state.typing[message.conversation]?[message.from.id] = nil
            }
        case .messageUpdated(let message):
            change { state in
                guard let index = state.messages[message.conversation]?.firstIndex(where: { $0.seq == message.seq }) else { return }
                state.messages[message.conversation]?[index] = message
                if state.conversations[message.conversation]?.lastSeq == message.seq { state.conversations[message.conversation]?.lastMessage = message }
            }
        case .messageRead(let conversation, let user, let seq) where user == me:
            change { Self.read(conversation, through: seq, in: &$0) }
        case .typing(let conversation, let user, _):
            // Held on this device's clock (the server's `until` is on its own): as long from now.
            let until = clock.now() + Self.typingFor
            change { $0.typing[conversation, default: [:]][user] = until }
        case .conversationUpdated(let change):
            await update(change.conversation)
        case .messageRejected(_, let clientMsgId, let reason):
            change { state in
                if let index = state.pending.firstIndex(where: { $0.id == clientMsgId }) { state.pending[index].status = .rejected(reason) }
            }
        case .joinRequested(let request):
            change { state in
                state.joinRequests[request.conversation, default: []].removeAll { $0.user == request.user }
                state.joinRequests[request.conversation, default: []].append(request)
            }
        case .joinDeclined(let conversation, _):
            change { _ = $0.declined.insert(conversation) }
        case .presenceChanged(let presence):
            change { $0.presence[presence.user] = presence }
        case .conversationRemoved(let conversation, _, _):
            change { state in
                state.conversations[conversation] = nil
                state.messages[conversation] = nil
                state.typing[conversation] = nil
            }
        default:
            break
        }
    }

    /// How long a `msg.typing` holds (the server's 6 s).
    static let typingFor: Int64 = 6_000

    /// Fetches one conversation as the user now sees it (`conv.get`).
    func update(_ conversation: String) async {
        do {
            let answer = try await request(.get(conversation: conversation))
            guard let summary: ConversationSummary = decoded(answer["conversation"]) else { return }
            change { $0.conversations[conversation] = summary }
            if summary.lastSeq > state.lastSeq(conversation) { try await sync(conversation, through: summary.lastSeq) }
        } catch {
            logger.info("messaging: conv.get \(conversation) failed: \(error)")
        }
    }
}
