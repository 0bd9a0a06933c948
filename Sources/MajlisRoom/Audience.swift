/// Who receives an event.
public enum Audience: Sendable, Equatable {
    /// Every member.
    case room
    /// Every member but one.
    case roomExcept(String)
    /// One user.
    case user(String)
    /// These users.
    case users([String])
    /// Owner, admins, and members with the server-wide admin grant.
    case moderators
}
