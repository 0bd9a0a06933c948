/// An invitation to a seat, waiting for its answer.
struct SeatInvite: Sendable, Equatable {
    var id: String
    var from: String
    var user: String
    var index: Int?
    /// Unix ms.
    var expiresAt: Int64
}
