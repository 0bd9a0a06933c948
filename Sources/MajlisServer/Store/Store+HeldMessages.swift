import Foundation
import MajlisProtocol

/// Messages held for review (`HeldMessage`): stored apart from the conversation, with no `seq`,
/// until the app's backend releases one (posted then, as its sender sent it) or rejects it.
extension Store {
    /// What became of a message to hold.
    public enum Holding: Sendable, Equatable {
        /// Held now (`new`), or held already under the same client id.
        case held(HeldMessage, new: Bool)
        /// The sender's client id was posted already (released, or sent before the limit).
        case posted(ConversationMessage)
    }

    private static let heldColumns = "id, conversation, sender, sender_name, recipient, type, text, payload, fallback, reply_to, mentions, client_msg_id, at"

    private static func held(_ row: [SQLValue]) -> HeldMessage {
        let draft = MessageDraft(
            type: row[5].text ?? "text", text: row[6].text, payload: row[7].text.flatMap { try? JSONParser().parse($0) }, fallback: row[8].text,
            replyTo: row[9].int, mentions: row[10].text.map { $0.split(separator: " ").map(String.init) } ?? [], clientMsgId: row[11].text ?? "")
        return HeldMessage(
            id: row[0].text ?? "", conversation: row[1].text ?? "", from: UserRef(id: row[2].text ?? "", name: row[3].text ?? ""), to: row[4].text ?? "",
            draft: draft, at: row[12].int ?? 0)
    }

    /// Holds `draft` from `sender` to `recipient` (their direct conversation `id`) as `heldId`,
    /// unless its client id was held or posted before; `webhook` makes the event for the app's
    /// backend (in the same transaction, for `endpoints`).
    public func hold(
        _ draft: MessageDraft, in id: String, from sender: UserRef, to recipient: String, as heldId: String, now: Int64,
        webhook: (HeldMessage) -> WebhookEvent? = { _ in nil }, endpoints: [String] = []
    ) throws -> Holding {
        try writing { db in
            try db.transaction {
                if let row = try db.query(
                    "SELECT \(Self.messageColumns) FROM messages WHERE conversation = ? AND sender = ? AND client_msg_id = ?",
                    .text(id), .text(sender.id), .text(draft.clientMsgId)
                ).first, let message = Self.message(row, at: 0, conversation: id) {
                    return .posted(message)
                }
                if let row = try db.query(
                    "SELECT \(Self.heldColumns) FROM held_messages WHERE conversation = ? AND sender = ? AND client_msg_id = ?",
                    .text(id), .text(sender.id), .text(draft.clientMsgId)
                ).first {
                    return .held(Self.held(row), new: false)
                }
                let held = HeldMessage(id: heldId, conversation: id, from: sender, to: recipient, draft: draft, at: now)
                let payload = try draft.payload.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
                try db.run(
                    "INSERT INTO held_messages (\(Self.heldColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    .text(heldId), .text(id), .text(sender.id), .text(sender.name), .text(recipient), .text(draft.type),
                    draft.text.map(SQLValue.text) ?? .null, payload.map(SQLValue.text) ?? .null, draft.fallback.map(SQLValue.text) ?? .null,
                    draft.replyTo.map(SQLValue.int) ?? .null, draft.mentions.isEmpty ? .null : .text(draft.mentions.joined(separator: " ")),
                    .text(draft.clientMsgId), .int(now))
                if let event = webhook(held) { try Self.insert([event], endpoints: endpoints, in: db) }
                return .held(held, new: true)
            }
        }
    }

    /// Held messages by id (oldest first) after `after`, at most `limit`.
    public func heldMessages(after: String?, limit: Int) throws -> [HeldMessage] {
        try withDatabase { db in
            try db.query("SELECT \(Self.heldColumns) FROM held_messages WHERE id > ? ORDER BY id LIMIT ?", .text(after ?? ""), .int(Int64(limit)))
                .map(Self.held)
        }
    }

    /// Held message `heldId` (nil: none).
    public func heldMessage(_ heldId: String) throws -> HeldMessage? {
        try withDatabase { db in try db.query("SELECT \(Self.heldColumns) FROM held_messages WHERE id = ?", .text(heldId)).first.map(Self.held) }
    }

    /// Posts held message `heldId` as its sender sent it, and forgets it: the message it became
    /// (nil: no such held message). `webhook` as for `post`.
    public func release(
        _ heldId: String, now: Int64, webhook: (ConversationMessage) -> WebhookEvent? = { _ in nil }, endpoints: [String] = []
    ) throws -> (held: HeldMessage, posting: Posting)? {
        try writing { db in
            try db.transaction {
                guard let row = try db.query("SELECT \(Self.heldColumns) FROM held_messages WHERE id = ?", .text(heldId)).first else { return nil }
                let held = Self.held(row)
                let posting = try Self.post(held.draft, in: held.conversation, from: held.from, direct: (held.from.id, held.to), now: now, in: db)
                if case .posted(let message, _) = posting, let event = webhook(message) { try Self.insert([event], endpoints: endpoints, in: db) }
                try db.run("DELETE FROM held_messages WHERE id = ?", .text(heldId))
                return (held, posting)
            }
        }
    }

    /// Forgets held message `heldId` unsent: what it was (nil: no such held message).
    public func reject(_ heldId: String) throws -> HeldMessage? {
        try writing { db in
            try db.transaction {
                guard let row = try db.query("SELECT \(Self.heldColumns) FROM held_messages WHERE id = ?", .text(heldId)).first else { return nil }
                try db.run("DELETE FROM held_messages WHERE id = ?", .text(heldId))
                return Self.held(row)
            }
        }
    }
}
