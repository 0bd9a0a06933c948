/// A request frame that decoded completely.
public struct IncomingRequest: Sendable, Equatable {
    public var id: Int64
    public var op: String
    /// The idempotency key, if the client gave one.
    public var rid: String?
    public var command: ClientCommand

    public init(id: Int64, op: String, rid: String?, command: ClientCommand) {
        self.id = id
        self.op = op
        self.rid = rid
        self.command = command
    }
}
