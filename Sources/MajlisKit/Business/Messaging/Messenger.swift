import Foundation
import MajlisProtocol

/// The interactor of the user's conversations outside rooms (docs/protocol.md section 17).
///
/// It lists the conversations and syncs each from the newest message it holds, follows
/// `msg.new` and the other messaging events (a gap in a conversation's numbers syncs it), syncs
/// again after every reconnect, and keeps what the user sends as pending until the server has
/// it, sending it again with the same client id after a failure, so a message is posted once.
/// Every intent is a method; state changes come from the server. Errors are `MajlisError`;
/// nothing here traps.
public actor Messenger {
    let signaling: any SignalingClient
    let clock: any KitClock
    let logger: Logger
    /// Messages held per conversation (the newest).
    public static let kept = 500

    public internal(set) var state = MessengerState()
    var subscribers: [UUID: AsyncStream<MessengerState>.Continuation] = [:]
    var listener: Task<Void, Never>?
    var refreshing = false
    /// Where the state is kept between launches, and whose it was when loaded.
    let store: (any MessengerStore)?
    var storedUser: String?
    var saveScheduled = false
    /// Where media messages' files go (nil: this messenger sends none).
    let transfer: (any MediaTransfer)?
    /// Pending messages being sent now: a second try of one while the first runs is refused
    /// (`misuse`), so a file is never uploaded by two tries at once.
    var posting: Set<String> = []
    /// Bytes a PATCH carries: 256 KiB (the server stores in pieces of this size; over a
    /// 100 kb/s link one takes about 21 s, and a cut one keeps what arrived).
    static let uploadPiece = 256 * 1024

    /// `store`: where the conversations are kept between launches (`FileMessengerStore`); the
    /// state saved last is shown at once, before `start`. `transfer`: where media messages'
    /// files are uploaded (`HTTPMediaTransfer(signaling:)`).
    public init(
        signaling: any SignalingClient, store: (any MessengerStore)? = nil, transfer: (any MediaTransfer)? = nil, clock: any KitClock = SystemClock(),
        logger: Logger = .silent
    ) {
        self.signaling = signaling
        self.clock = clock
        self.logger = logger
        self.store = store
        self.transfer = transfer
        if let snapshot = store?.load() {
            state = snapshot.state
            storedUser = snapshot.user
        }
    }

    /// The user's id, once connected.
    var me: String? { signaling.currentSession?.userId }

    /// The state from now on, starting with the current one (a reader always gets the newest).
    public func states() -> AsyncStream<MessengerState> {
        let (stream, continuation) = AsyncStream<MessengerState>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        subscribers[id] = continuation
        continuation.yield(state)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    private func unsubscribe(_ id: UUID) { subscribers[id] = nil }

    /// The one place the state changes; its readers are told.
    func change(_ body: (inout MessengerState) -> Void) {
        let before = state
        body(&state)
        guard state != before else { return }
        for subscriber in subscribers.values { subscriber.yield(state) }
        guard store != nil else { return }
        // What is being sent is saved at once (a kill must not lose it); the rest, and an
        // upload's progress (the server is asked where it stands anyway), within half a second,
        // once for many changes (a sync of thousands of messages saves a few times).
        if state.pending.map(\.withoutProgress) != before.pending.map(\.withoutProgress) {
            save()
        } else if !saveScheduled, state.conversations != before.conversations || state.messages != before.messages || state.pending != before.pending {
            saveScheduled = true
            Task { [weak self] in
                try? await Task.sleep(for: .milliseconds(500))
                await self?.save()
            }
        }
    }

    /// Saves the state to the store now (an app going to the background may call it).
    public func save() {
        saveScheduled = false
        guard let store, let user = me ?? storedUser else { return }
        store.save(MessengerSnapshot(user: user, state: state))
    }

    /// Starts following the conversations: lists them, syncs each, and listens for what comes.
    /// The signaling client must be connected.
    public func start() async throws(MajlisError) {
        // Another user's saved conversations are not this user's.
        if let storedUser, let me, storedUser != me { change { $0 = MessengerState() } }
        storedUser = me
        if listener == nil {
            let stream = signaling.subscribe()
            listener = Task { [weak self] in
                for await event in stream {
                    guard let self else { return }
                    await self.handle(event)
                }
            }
        }
        try await refresh()
        // What was being sent when the app last stopped (or could not be sent) goes now, under
        // its client id: posted once.
        for pending in state.pending {
            switch pending.status {
            case .sending, .failed: _ = try? await post(pending.id)
            case .held, .rejected: continue
            }
        }
    }

    /// Stops following (the state stays as it was).
    public func stop() {
        listener?.cancel()
        listener = nil
    }

    /// Lists the conversations and syncs each whose newest message is newer than what is held
    /// (after a reconnect, or to be sure), page by page.
    public func refresh() async throws(MajlisError) {
        guard !refreshing else { return }
        refreshing = true
        defer { refreshing = false }
        var after: String?
        var listed: [String: ConversationSummary] = [:]
        repeat {
            let page = try await request(.list(after: after, limit: 200))
            let entries: [ConversationSummary] = decoded(page["conversations"]) ?? []
            for entry in entries { listed[entry.id] = entry }
            after = page["more"] == true ? entries.last?.id : nil
        } while after != nil
        change { state in
            state.conversations = listed
            for id in state.messages.keys where listed[id] == nil { state.messages[id] = nil }
        }
        for summary in listed.values where summary.lastSeq > state.lastSeq(summary.id) {
            try await sync(summary.id, through: summary.lastSeq)
        }
        let peers = listed.values.filter { $0.kind == .direct }.sorted { $0.updatedAt > $1.updatedAt }.compactMap(\.peer)
        if !peers.isEmpty { try await presence(of: Array(peers.prefix(100))) }
        change { $0.synced = true }
    }

    /// Fetches the messages of `conversation` after the newest held, up to `newest`.
    func sync(_ conversation: String, through newest: Int64? = nil) async throws(MajlisError) {
        var more = true
        while more {
            let after = state.lastSeq(conversation)
            if let newest, after >= newest { return }
            let page = try await request(.sync(conversation: conversation, after: after, limit: 200))
            let messages: [ConversationMessage] = decoded(page["messages"]) ?? []
            more = page["more"] == true && !messages.isEmpty
            change { state in
                for message in messages { Self.insert(message, into: &state) }
            }
        }
    }

    // MARK: Intents

    /// Sends `draft` to a user or a conversation: pending at once, a message of its
    /// conversation once the server has it. A failure leaves it pending as failed (`retry`).
    /// Nil when the server holds it for review: it stays pending as `.held` until the review
    /// delivers it (it arrives as a message) or rejects it (`.rejected`).
    @discardableResult
    public func send(_ draft: MessageDraft, to target: MessageTarget) async throws(MajlisError) -> ConversationMessage? {
        change { $0.pending.append(PendingMessage(target: target, draft: draft, status: .sending, createdAt: clock.now())) }
        return try await post(draft.clientMsgId)
    }

    /// Sends `text` with a new client id.
    @discardableResult
    public func send(text: String, to target: MessageTarget) async throws(MajlisError) -> ConversationMessage? {
        try await send(MessageDraft(text: text, clientMsgId: UUID().uuidString), to: target)
    }

    /// Sends a pending message again (the same client id: posted once, however often tried).
    @discardableResult
    public func retry(_ clientMsgId: String) async throws(MajlisError) -> ConversationMessage? {
        change { state in
            if let index = state.pending.firstIndex(where: { $0.id == clientMsgId }) { state.pending[index].status = .sending }
        }
        return try await post(clientMsgId)
    }

    func post(_ clientMsgId: String) async throws(MajlisError) -> ConversationMessage? {
        guard state.pending.contains(where: { $0.id == clientMsgId }) else { throw MajlisError.misuse("no pending message \(clientMsgId)") }
        guard posting.insert(clientMsgId).inserted else { throw MajlisError.misuse("message \(clientMsgId) is being sent") }
        defer { posting.remove(clientMsgId) }
        let answer: JSONValue
        let pending: PendingMessage
        do throws(MajlisError) {
            try await upload(clientMsgId)
            guard let uploaded = state.pending.first(where: { $0.id == clientMsgId }) else { throw MajlisError.misuse("no pending message \(clientMsgId)") }
            pending = uploaded
            answer = try await request(.send(pending.target, pending.draft))
        } catch {
            change { state in
                if let index = state.pending.firstIndex(where: { $0.id == clientMsgId }) { state.pending[index].status = .failed(error.description) }
            }
            throw error
        }
        if let held = answer["held"]?.stringValue {
            change { state in
                if let index = state.pending.firstIndex(where: { $0.id == clientMsgId }) { state.pending[index].status = .held(id: held) }
            }
            return nil
        }
        guard let conversation = answer["conversation"]?.stringValue, let seq = answer["seq"]?.intValue else {
            throw MajlisError.server(ProtocolError(.internal, "msg.send answered without a seq"))
        }
        let draft = pending.draft
        let message = ConversationMessage(
            conversation: conversation, seq: seq, from: UserRef(id: me ?? "", name: signaling.currentSession?.userName ?? ""), type: draft.type,
            text: draft.text, payload: draft.payload, fallback: draft.fallback, replyTo: draft.replyTo,
            mentions: draft.mentions.isEmpty ? nil : draft.mentions, ts: answer["ts"]?.intValue ?? clock.now(), clientMsgId: draft.clientMsgId)
        let known = state.conversations[conversation] != nil
        change { state in
            state.pending.removeAll { $0.id == clientMsgId }
            Self.insert(message, into: &state, readBy: me)
        }
        // A conversation the first message made: listed with the rest.
        if !known { try? await refresh() }
        return message
    }

    /// Marks `conversation` read up to its newest message held.
    public func markRead(_ conversation: String) async throws(MajlisError) {
        let seq = state.lastSeq(conversation)
        guard let summary = state.conversations[conversation], summary.readSeq < seq else { return }
        _ = try await request(.read(conversation: conversation, seq: seq))
        change { Self.read(conversation, through: seq, in: &$0) }
    }

    /// Tells the others the user is typing (call every few seconds while it types).
    public func typing(in conversation: String) async throws(MajlisError) {
        _ = try await request(.typing(conversation: conversation))
    }

    /// The user's messages with every word of `query` (docs/protocol.md section 17, Search),
    /// newest first, in `conversation` or in all of the user's; `after` is the previous page's
    /// `next`.
    public func search(_ query: String, in conversation: String? = nil, after cursor: String? = nil, limit: Int = 20) async throws(MajlisError) -> SearchPage {
        let answer = try await request(.search(query: query, conversation: conversation, cursor: cursor, limit: limit))
        guard let page: SearchPage = decoded(answer) else { throw MajlisError.server(ProtocolError(.internal, "msg.search answered without messages")) }
        return page
    }

    /// Public groups with every word of `query` in their title or about (all without one), the
    /// largest first; `after` is the previous page's `next`.
    public func discover(_ query: String? = nil, after cursor: String? = nil, limit: Int = 20) async throws(MajlisError) -> DiscoverPage {
        let answer = try await request(.discover(query: query, cursor: cursor, limit: limit))
        guard let page: DiscoverPage = decoded(answer) else { throw MajlisError.server(ProtocolError(.internal, "conv.discover answered without groups")) }
        return page
    }

    /// Joins a public group: true when the user is a member now (an open group), false when it
    /// asked (a group that asks; its owner or an admin answers, and the group arrives with
    /// `conv.updated`, or `declined` holds it).
    @discardableResult
    public func join(_ conversation: String, note: String? = nil) async throws(MajlisError) -> Bool {
        let answer = try await request(.join(conversation: conversation, note: note))
        guard let summary: ConversationSummary = decoded(answer["conversation"]) else { return false }
        change { state in
            state.conversations[summary.id] = summary
            state.declined.remove(summary.id)
        }
        try await sync(conversation)
        return true
    }

    /// The pending requests to join a group the user owns or administers.
    public func joinRequests(in conversation: String) async throws(MajlisError) -> [JoinRequest] {
        let answer = try await request(.requests(conversation: conversation))
        let requests: [JoinRequest] = decoded(answer["requests"]) ?? []
        change { $0.joinRequests[conversation] = requests }
        return requests
    }

    /// Accepts or declines `user`'s request to join `conversation`.
    public func answerRequest(in conversation: String, from user: String, accept: Bool) async throws(MajlisError) {
        _ = try await request(.answerRequest(conversation: conversation, user: user, accept: accept))
        change { $0.joinRequests[conversation]?.removeAll { $0.user == user } }
    }

    /// Whether these users (100 at most) are online, for those of them who are the user's
    /// contacts (docs/protocol.md section 17, Presence); kept in `state.presence`, which
    /// `presence.changed` keeps current from then on.
    @discardableResult
    public func presence(of users: [String]) async throws(MajlisError) -> [UserPresence] {
        let answer = try await request(.presence(users: Array(users.prefix(100))))
        let presence: [UserPresence] = decoded(answer["presence"]) ?? []
        change { state in
            for entry in presence { state.presence[entry.user] = entry }
        }
        return presence
    }

    /// Who sees whether the user is online: `.contacts` (the server's default) or `.nobody`;
    /// nil only asks. Answers the setting now.
    @discardableResult
    public func sharePresence(_ sharing: PresenceSharing? = nil) async throws(MajlisError) -> PresenceSharing {
        let answer = try await request(.sharePresence(sharing))
        return answer["share"]?.stringValue.flatMap(PresenceSharing.init) ?? .contacts
    }

    /// Makes a group of the user and `members`.
    @discardableResult
    public func createGroup(
        title: String, members: [String], access: GroupAccess = .private, about: String? = nil
    ) async throws(MajlisError) -> ConversationSummary {
        let answer = try await request(.createGroup(title: title, members: members, access: access, about: about))
        guard let summary: ConversationSummary = decoded(answer["conversation"]) else {
            throw MajlisError.server(ProtocolError(.internal, "conv.create answered without the conversation"))
        }
        change { $0.conversations[summary.id] = summary }
        return summary
    }

    /// Any other messaging request (edit, revoke, invite, remove, leave, settings, ...): its data.
    /// What it changes comes back as events.
    @discardableResult
    public func request(_ command: MessagingCommand) async throws(MajlisError) -> JSONValue {
        let (op, args) = RequestEncoder.request(command)
        return try await signaling.request(op, args)
    }

    // MARK: State

    /// Adds `message` to its conversation (in order, once, the newest `kept`), and to the
    /// conversation's summary; `readBy` (the sender itself) has read it.
    static func insert(_ message: ConversationMessage, into state: inout MessengerState, readBy reader: String? = nil) {
        var list = state.messages[message.conversation] ?? []
        if let index = list.firstIndex(where: { $0.seq >= message.seq }) {
            if list[index].seq == message.seq { list[index] = message } else { list.insert(message, at: index) }
        } else {
            list.append(message)
        }
        if list.count > kept { list.removeFirst(list.count - kept) }
        state.messages[message.conversation] = list
        guard var summary = state.conversations[message.conversation] else { return }
        if message.seq >= summary.lastSeq {
            summary.lastSeq = message.seq
            summary.lastMessage = message
            summary.updatedAt = max(summary.updatedAt, message.ts)
        }
        if message.from.id == reader {
            summary.readSeq = max(summary.readSeq, message.seq)
            // One of the user's own, stored now (a held message released, or sent from here).
            state.pending.removeAll { $0.id == message.clientMsgId }
        }
        summary.unread = max(0, summary.lastSeq - summary.readSeq)
        state.conversations[message.conversation] = summary
    }

    static func read(_ conversation: String, through seq: Int64, in state: inout MessengerState) {
        guard var summary = state.conversations[conversation] else { return }
        summary.readSeq = max(summary.readSeq, seq)
        summary.unread = max(0, summary.lastSeq - summary.readSeq)
        state.conversations[conversation] = summary
    }

    func decoded<T: Decodable>(_ value: JSONValue?) -> T? {
        guard let value else { return nil }
        return try? JSONValueDecoder().decode(T.self, from: value)
    }
}
