import MajlisProtocol

/// A message the user sent that the server has not stored in its conversation yet: shown at
/// once, kept until it is stored (then it is an ordinary message of its conversation), and sent
/// again with the same client id, so that it is posted once however often it is tried.
public struct PendingMessage: Sendable, Equatable, Identifiable, Codable {
    public enum Status: Sendable, Equatable, Codable {
        case sending
        /// The last try failed: `retry` sends it again.
        case failed(String)
        /// Held for the app's review (a message to someone who has not written back, past the
        /// server's limit): delivered if released (it then arrives as a message of the
        /// conversation), else rejected (`.rejected`).
        case held(id: String)
        /// Held, and then rejected by the app's review: it will not be delivered.
        case rejected(String)
    }

    public var target: MessageTarget
    /// What is sent; a finished upload's id is put in its payload (`media`, `thumbnail`).
    public var draft: MessageDraft
    public var status: Status
    /// When it was written (the clock's ms).
    public var createdAt: Int64
    /// The files it carries, uploaded before it is sent.
    public var uploads: [PendingUpload]

    public init(target: MessageTarget, draft: MessageDraft, status: Status, createdAt: Int64, uploads: [PendingUpload] = []) {
        self.target = target
        self.draft = draft
        self.status = status
        self.createdAt = createdAt
        self.uploads = uploads
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        target = try container.decode(MessageTarget.self, forKey: .target)
        draft = try container.decode(MessageDraft.self, forKey: .draft)
        status = try container.decode(Status.self, forKey: .status)
        createdAt = try container.decode(Int64.self, forKey: .createdAt)
        // A store written before messages carried files has none.
        uploads = try container.decodeIfPresent([PendingUpload].self, forKey: .uploads) ?? []
    }

    public var id: String { draft.clientMsgId }

    /// The same message, its uploads' progress left out: what must be saved at once when it
    /// changes (a new upload id, a finished file), where progress may wait for the next save.
    var withoutProgress: PendingMessage {
        var copy = self
        for index in copy.uploads.indices where !copy.uploads[index].isFinished { copy.uploads[index].offset = 0 }
        return copy
    }
}
