/// Why a resource pack is refused: its archive, its manifest, or a file the manifest names.
public struct PackError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
