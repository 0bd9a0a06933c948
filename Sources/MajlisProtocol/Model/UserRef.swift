/// A user's id and display name, as carried by chat messages.
public struct UserRef: Sendable, Codable, Equatable {
    public var id: String
    public var name: String

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}
