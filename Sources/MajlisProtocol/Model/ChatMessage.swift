/// A chat message (the data of `chat.message`, and an entry of `chat.history`).
public struct ChatMessage: Sendable, Codable, Equatable {
    /// Increasing per room.
    public var msgId: Int64
    public var from: UserRef
    /// "text" or any type the app defines.
    public var type: String
    public var text: String?
    public var payload: JSONValue?
    /// Unix milliseconds.
    public var ts: Int64

    public init(msgId: Int64, from: UserRef, type: String, text: String?, payload: JSONValue?, ts: Int64) {
        self.msgId = msgId
        self.from = from
        self.type = type
        self.text = text
        self.payload = payload
        self.ts = ts
    }
}
