import MajlisProtocol

/// Who makes a request: the identity and grants from the caller's access token.
public struct Caller: Sendable, Equatable {
    public var id: String
    public var name: String
    public var grants: Grants
    /// The app's backend through the server API: acts on the room without being a member (see
    /// `RoomEngine.operatorMay`), with the rights of its grants.
    public var isOperator: Bool

    public init(id: String, name: String, grants: Grants = Grants(), isOperator: Bool = false) {
        self.id = id
        self.name = name
        self.grants = grants
        self.isOperator = isOperator
    }
}
