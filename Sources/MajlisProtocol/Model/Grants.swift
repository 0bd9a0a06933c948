/// What an access token allows (PROTOCOL.md section 3).
public struct Grants: Sendable, Codable, Equatable {
    /// May join rooms. Default true.
    public var join: Bool
    /// May create rooms. Default false.
    public var create: Bool
    /// Server-wide moderation: acts as an admin in every room and may end any room. Default false.
    public var admin: Bool
    /// May be heard when seated. Default true.
    public var publish: Bool
    /// May send chat. Default true.
    public var chat: Bool

    public init(join: Bool = true, create: Bool = false, admin: Bool = false, publish: Bool = true, chat: Bool = true) {
        self.join = join
        self.create = create
        self.admin = admin
        self.publish = publish
        self.chat = chat
    }

    private enum CodingKeys: String, CodingKey { case join, create, admin, publish, chat }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        join = try c.decodeIfPresent(Bool.self, forKey: .join) ?? true
        create = try c.decodeIfPresent(Bool.self, forKey: .create) ?? false
        admin = try c.decodeIfPresent(Bool.self, forKey: .admin) ?? false
        publish = try c.decodeIfPresent(Bool.self, forKey: .publish) ?? true
        chat = try c.decodeIfPresent(Bool.self, forKey: .chat) ?? true
    }

    /// The grant names accepted by `majlis token --grants`.
    public static let names = ["join", "create", "admin", "publish", "chat"]

    /// Grants from a list of names; every grant not named is false.
    public init(names list: [String]) throws(ProtocolError) {
        for name in list where !Grants.names.contains(name) {
            throw ProtocolError(.badRequest, "unknown grant '\(name)' (known: \(Grants.names.joined(separator: ", ")))")
        }
        self.init(
            join: list.contains("join"), create: list.contains("create"), admin: list.contains("admin"),
            publish: list.contains("publish"), chat: list.contains("chat"))
    }
}
