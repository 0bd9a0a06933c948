import Foundation

extension JSONValue {
    /// The number of bytes this value takes as compact JSON.
    public var encodedByteCount: Int {
        (try? JSONEncoder().encode(self).count) ?? Int.max
    }
}
