/// Any request a client can make, decoded from its `op` and `args`.
public enum ClientCommand: Sendable, Equatable {
    case hello(HelloArgs)
    case ping
    case renew(token: String)
    case bye
    /// An op addressed to the room `room`.
    case room(String, RoomCommand)
}
