import MajlisProtocol

/// A page of messages found by `Messenger.search`: newest first, and where the next page starts.
public struct SearchPage: Sendable, Equatable, Decodable {
    public var messages: [ConversationMessage]
    /// Pass to `Messenger.search` for the page after this one; nil on the last page.
    public var next: String?
}
