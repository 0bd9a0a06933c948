/// Who sees whether a user is online, and when they last were (`presence.share`): the user's
/// contacts (the default), or nobody.
public enum PresenceSharing: String, Sendable, Codable, CaseIterable {
    case contacts
    case nobody
}
