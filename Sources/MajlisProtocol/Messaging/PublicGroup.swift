/// A public group as anyone finds it (`conv.discover`): what it is about, not what it says.
public struct PublicGroup: Sendable, Codable, Equatable {
    public var id: String
    public var title: String
    public var about: String?
    public var access: GroupAccess
    public var memberCount: Int
    public var createdAt: Int64

    public init(id: String, title: String, about: String? = nil, access: GroupAccess, memberCount: Int, createdAt: Int64) {
        self.id = id
        self.title = title
        self.about = about
        self.access = access
        self.memberCount = memberCount
        self.createdAt = createdAt
    }
}
