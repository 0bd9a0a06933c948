/// The answer to `chat.history`: messages, newest first.
public struct ChatHistoryPage: Sendable, Codable, Equatable {
    public var messages: [ChatMessage]

    public init(messages: [ChatMessage]) { self.messages = messages }
}
