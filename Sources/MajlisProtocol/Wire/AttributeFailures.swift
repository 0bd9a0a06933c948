/// The answer to `attr.set` and `attr.delete`: the keys skipped because someone else owns them.
public struct AttributeFailures: Sendable, Codable, Equatable {
    public var failed: [String]

    public init(failed: [String]) { self.failed = failed }
}
