/// One step of `attr.set`, `attr.delete` or `attr.batch`.
public enum AttributeOperation: Sendable, Equatable {
    /// Sets keys. `deleteOnLeave` makes keys vanish when their owner leaves; `updateOwner` makes the
    /// caller the owner of keys it overwrites.
    case set([String: String], deleteOnLeave: Bool, updateOwner: Bool)
    /// Deletes keys.
    case delete([String])
}
