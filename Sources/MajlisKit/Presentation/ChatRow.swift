/// One row of the chat list.
public enum ChatRow: Sendable, Equatable {
    /// A time separator, shown before a row more than five minutes after the previous one.
    case time(String)
    case message(id: Int64, sender: String, text: String, isMine: Bool)
    /// Someone joined or left.
    case notice(String)
}
