import MajlisProtocol

/// What one transition of a room produced: the answer to the caller, the events to send (in
/// order, after the answer), and the effects for the driver.
public struct RoomOutcome: Sendable, Equatable {
    public var reply: Result<RoomReply, ProtocolError>
    public var deliveries: [Delivery]
    public var effects: [RoomEffect]

    public init(reply: Result<RoomReply, ProtocolError> = .success(.done), deliveries: [Delivery] = [], effects: [RoomEffect] = []) {
        self.reply = reply
        self.deliveries = deliveries
        self.effects = effects
    }
}
