/// The error codes of the protocol (PROTOCOL.md section 12), in the order of precedence:
/// when several apply, the earliest listed here that applies is returned.
public enum ErrorCode: String, Sendable, Codable, CaseIterable {
    case unsupported
    case badRequest = "bad_request"
    case unauthorized
    case tokenExpired = "token_expired"
    case forbidden
    case roomNotFound = "room_not_found"
    case conversationNotFound = "conversation_not_found"
    case messageNotFound = "message_not_found"
    case roomExists = "room_exists"
    case roomFull = "room_full"
    case notInRoom = "not_in_room"
    case banned
    case seatOutOfRange = "seat_out_of_range"
    case seatOccupied = "seat_occupied"
    case seatLocked = "seat_locked"
    case alreadySeated = "already_seated"
    case notSeated = "not_seated"
    case noFreeSeat = "no_free_seat"
    case approvalRequired = "approval_required"
    case alreadyRequested = "already_requested"
    case requestNotFound = "request_not_found"
    case inviteNotFound = "invite_not_found"
    case chatMuted = "chat_muted"
    case rateLimited = "rate_limited"
    case tooLarge = "too_large"
    case conflict
    case `internal`
    /// The store went as it stored the change: whether it did is not known (sent again, a
    /// `msg.send` with the same client id is posted once).
    case outcomeUnknown = "outcome_unknown"
}
