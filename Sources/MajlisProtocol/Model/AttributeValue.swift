/// A room attribute's value and the user who owns its key.
public struct AttributeValue: Sendable, Codable, Equatable {
    public var value: String
    public var owner: String

    public init(value: String, owner: String) {
        self.value = value
        self.owner = owner
    }
}
