/// Where and how the server posts webhooks (`majlis serve --webhook URL ...`).
public struct WebhookSettings: Sendable, Equatable {
    /// The URLs every event is posted to (each gets every event, in order per room).
    public var endpoints: [String] = []
    /// The API key (from `--keys`) whose secret signs the posts; the first key when nil.
    public var key: String?
    /// How long an event is retried before it is given up (counted and logged), seconds.
    public var retention = 86_400
    /// How long one post may take before it counts as failed, seconds.
    public var timeout = 10.0
    /// Whether chat messages are posted too (`chat.message`).
    public var includeChat = false
    /// Whether conversations' messages are posted too (`message.created`, with the members who
    /// were offline, for push notifications).
    public var includeMessages = false
    /// The first retry comes after about this long (ms); each later one waits twice as long, up
    /// to `longestRetry`.
    public var firstRetry: Int64 = 1_000
    public var longestRetry: Int64 = 600_000
    /// Posts in flight at once (to different rooms or endpoints; one at a time per room).
    public var concurrency = 16

    public init() {}

    public var enabled: Bool { !endpoints.isEmpty }
}
