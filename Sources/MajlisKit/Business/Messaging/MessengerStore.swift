import Foundation
import MajlisProtocol

/// Where `Messenger` keeps what it holds between launches of the app: the conversations, their
/// newest messages and what the user sent that the server has not stored. An app that starts
/// offline shows them at once, and a message sent just before the app was killed is sent again
/// (under its client id: posted once) when it starts next.
public protocol MessengerStore: Sendable {
    /// What was saved last (nil: nothing, or nothing readable).
    func load() -> MessengerSnapshot?
    func save(_ snapshot: MessengerSnapshot)
}

/// What `MessengerStore` keeps: the state of one user's conversations.
public struct MessengerSnapshot: Sendable, Equatable, Codable {
    /// The user the state is of: another user's is not shown.
    public var user: String
    public var conversations: [String: ConversationSummary]
    public var messages: [String: [ConversationMessage]]
    public var pending: [PendingMessage]

    public init(user: String, state: MessengerState) {
        self.user = user
        conversations = state.conversations
        messages = state.messages
        pending = state.pending
    }

    /// The state it holds (not yet synced: nothing who types, no join requests).
    public var state: MessengerState {
        var state = MessengerState()
        state.conversations = conversations
        state.messages = messages
        state.pending = pending
        return state
    }
}

/// A `MessengerStore` in one JSON file on the device, replaced whole on each save (written beside
/// it and moved over it, so a kill mid-write leaves the previous one). A file that cannot be read
/// (damaged, of another version) is set aside: the app starts as if new and syncs.
public final class FileMessengerStore: MessengerStore {
    public let path: String
    private let logger: Logger

    public init(path: String, logger: Logger = .silent) {
        self.path = path
        self.logger = logger
    }

    public func load() -> MessengerSnapshot? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            return try JSONDecoder().decode(MessengerSnapshot.self, from: data)
        } catch {
            logger.info("messaging: the saved conversations at \(path) cannot be read (\(error)); starting afresh")
            return nil
        }
    }

    public func save(_ snapshot: MessengerSnapshot) {
        do {
            let data = try JSONEncoder().encode(snapshot)
            let url = URL(fileURLWithPath: path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url, options: .atomic)
        } catch {
            logger.info("messaging: the conversations could not be saved at \(path): \(error)")
        }
    }
}
