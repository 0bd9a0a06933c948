import MajlisProtocol

/// A page of public groups found by `Messenger.discover`: the largest first, and where the next
/// page starts.
public struct DiscoverPage: Sendable, Equatable, Decodable {
    public var groups: [PublicGroup]
    /// Pass to `Messenger.discover` for the page after this one; nil on the last page.
    public var next: String?
}
