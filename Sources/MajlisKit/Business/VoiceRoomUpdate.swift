import MajlisProtocol

/// What a `VoiceRoom` streams: every new state, and the one-off events a screen reacts to
/// (a signal, an invite, an answer to a request to speak, a chat message).
public enum VoiceRoomUpdate: Sendable, Equatable {
    case state(RoomState)
    case event(ServerEvent)
}
