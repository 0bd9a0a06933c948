import MajlisProtocol

/// One fact an app's backend hears of by webhook: what happened (`type`), in which room or
/// conversation, when (Unix ms), and its details. The store gives it an id and the next
/// sequence number of its room (or conversation) when it is written, in the same transaction as
/// the change that caused it.
public struct WebhookEvent: Sendable, Equatable {
    public var type: String
    /// The lane the event is ordered in: its room's id, or for a conversation `~` and its id (no
    /// room id has a `~`).
    public var room: String
    /// The conversation the event is about (then the body names it instead of a room).
    public var conversation: String?
    public var time: Int64
    public var data: JSONValue

    public init(type: String, room: String, time: Int64, data: JSONValue) {
        self.type = type
        self.room = room
        self.time = time
        self.data = data
    }

    public init(type: String, conversation: String, time: Int64, data: JSONValue) {
        self.init(type: type, room: "~" + conversation, time: time, data: data)
        self.conversation = conversation
    }

    /// The body posted: `{"id", "type", "room" (or "conversation"), "seq", "time", "data"}`.
    func body(id: String, seq: Int64) -> String {
        var value: [String: JSONValue] = ["id": .string(id), "type": .string(type), "seq": .int(seq), "time": .int(time), "data": data]
        if let conversation { value["conversation"] = .string(conversation) } else { value["room"] = .string(room) }
        return String(decoding: WireEncoder.encodeSorted(JSONValue.object(value)), as: UTF8.self)
    }
}
