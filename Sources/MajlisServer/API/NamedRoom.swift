import MajlisProtocol

/// A room as the server API shows it: `RoomInfo`'s fields and, beside them, the owner's display
/// name when the room knows it (`ownerName`), so a console need not show a bare user id.
struct NamedRoom: Encodable, Sendable {
    var room: RoomInfo
    var ownerName: String?

    private enum Keys: String, CodingKey { case ownerName }

    func encode(to encoder: any Encoder) throws {
        try room.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(ownerName, forKey: .ownerName)
    }
}
