import MajlisProtocol

/// One fact an app's backend hears of by webhook: what happened (`type`), in which room, when
/// (Unix ms), and its details. The store gives it an id and the room's next sequence number
/// when it is written, in the same transaction as the change that caused it.
public struct WebhookEvent: Sendable, Equatable {
    public var type: String
    public var room: String
    public var time: Int64
    public var data: JSONValue

    public init(type: String, room: String, time: Int64, data: JSONValue) {
        self.type = type
        self.room = room
        self.time = time
        self.data = data
    }

    /// The body posted: `{"id", "type", "room", "seq", "time", "data"}`.
    func body(id: String, seq: Int64) -> String {
        let value: JSONValue = [
            "id": .string(id), "type": .string(type), "room": .string(room), "seq": .int(seq), "time": .int(time), "data": data,
        ]
        return String(decoding: WireEncoder.encodeSorted(value), as: UTF8.self)
    }
}
