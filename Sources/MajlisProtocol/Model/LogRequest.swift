/// The app's backend asking one user's client for its log (`POST /v1/users/{user}/logs`,
/// docs/protocol.md section 20): the client's entries from `since` to `until` (Unix ms; no
/// `until`: up to when the client sends it), sent up as a text upload and handed over with
/// `log.deliver`.
public struct LogRequest: Sendable, Codable, Equatable {
    public var id: String
    public var since: Int64
    public var until: Int64?
    /// Why the log is asked for, as the backend said it (for the person, if the app shows it).
    public var reason: String?

    /// The longest span one request may cover (7 days, ms), and the type of a delivered log.
    public static let longestSpan: Int64 = 7 * 86_400_000
    public static let type = "text/plain"

    public init(id: String, since: Int64, until: Int64? = nil, reason: String? = nil) {
        self.id = id
        self.since = since
        self.until = until
        self.reason = reason
    }
}
