/// Whether a contact is online, as `presence.get` and `presence.changed` tell it: `online` on any
/// device on any node; `lastSeen` (Unix ms) when their last device went away, while they are not
/// online (absent when the server never saw them go); `hidden` when they share their presence
/// with nobody (from then on they are shown as neither online nor offline).
public struct UserPresence: Sendable, Codable, Equatable {
    public var user: String
    public var online: Bool
    public var lastSeen: Int64?
    public var hidden: Bool?

    public init(user: String, online: Bool, lastSeen: Int64? = nil, hidden: Bool? = nil) {
        self.user = user
        self.online = online
        self.lastSeen = lastSeen
        self.hidden = hidden
    }
}
