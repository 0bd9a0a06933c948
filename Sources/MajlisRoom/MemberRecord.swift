import MajlisProtocol

/// A member as the room keeps it.
struct MemberRecord: Sendable, Equatable {
    var id: String
    var name: String
    var avatar: String
    var grants: Grants
    /// Unix ms.
    var joinedAt: Int64
    /// Where the member stands in the join order: larger for later joins.
    var joinIndex: Int
    /// The member said it will not be handed the room (`member.update` `refuseOwnership`).
    var refusesOwnership = false
}
