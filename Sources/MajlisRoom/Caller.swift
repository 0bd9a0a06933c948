import MajlisProtocol

/// Who makes a request: the identity and grants from the caller's access token.
public struct Caller: Sendable, Equatable {
    public var id: String
    public var name: String
    public var grants: Grants

    public init(id: String, name: String, grants: Grants = Grants()) {
        self.id = id
        self.name = name
        self.grants = grants
    }
}
