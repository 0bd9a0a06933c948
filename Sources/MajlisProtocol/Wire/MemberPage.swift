/// The answer to `member.list`: members in join order, and the id to continue after.
public struct MemberPage: Sendable, Codable, Equatable {
    public var members: [Member]
    public var next: String?

    public init(members: [Member], next: String?) {
        self.members = members
        self.next = next
    }
}
