import MajlisProtocol

/// Everything a conversations screen shows, mirrored from the server by `Messenger`. Equatable,
/// so a view can redraw only on change.
public struct MessengerState: Sendable, Equatable {
    /// The user's conversations, by id.
    public var conversations: [String: ConversationSummary] = [:]
    /// Each conversation's messages held here, oldest first, without gaps: the newest
    /// `Messenger.kept` at most.
    public var messages: [String: [ConversationMessage]] = [:]
    /// Who is typing where, until when (the clock's ms).
    public var typing: [String: [String: Int64]] = [:]
    /// What the user sent that is not stored yet, oldest first.
    public var pending: [PendingMessage] = []
    /// Requests to join the groups the user owns or administers, by group, oldest first (as
    /// they arrive; `Messenger.joinRequests(in:)` reads them all).
    public var joinRequests: [String: [JoinRequest]] = [:]
    /// Groups whose owner or an admin declined the user's request to join.
    public var declined: Set<String> = []
    /// Contacts' presence, by user, as `presence.get` and `presence.changed` last told it (the
    /// peers of the newest 100 direct conversations are asked at each sync).
    public var presence: [String: UserPresence] = [:]
    /// Whether the first list and sync are done.
    public var synced = false

    public init() {}

    /// The conversations as a list shows them: pinned first, then the newest first.
    public var ordered: [ConversationSummary] {
        conversations.values.sorted { a, b in
            if a.pinned != b.pinned { return a.pinned }
            if a.updatedAt != b.updatedAt { return a.updatedAt > b.updatedAt }
            return a.id < b.id
        }
    }

    /// Messages not read, in conversations not muted.
    public var unread: Int64 { conversations.values.reduce(0) { $0 + ($1.muted ? 0 : $1.unread) } }

    /// The newest `seq` held for `conversation` (0: none).
    public func lastSeq(_ conversation: String) -> Int64 { messages[conversation]?.last?.seq ?? 0 }

    /// Who is typing in `conversation` at `now`.
    public func typing(in conversation: String, now: Int64) -> [String] {
        (typing[conversation] ?? [:]).filter { $0.value > now }.keys.sorted()
    }
}
