/// The answer to `chat.send`: the message's id and server time.
public struct ChatPosted: Sendable, Codable, Equatable {
    public var msgId: Int64
    public var ts: Int64

    public init(msgId: Int64, ts: Int64) {
        self.msgId = msgId
        self.ts = ts
    }
}
