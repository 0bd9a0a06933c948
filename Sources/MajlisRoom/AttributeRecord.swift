/// A room attribute as the room keeps it.
struct AttributeRecord: Sendable, Equatable {
    var value: String
    var owner: String
    var deleteOnLeave: Bool
}
