/// An event as it travels: `{"ev": ..., "room": ..., "seq": ..., "data": {...}}`.
public struct EventFrame: Sendable, Equatable, Codable {
    /// The room the event belongs to; absent for session events such as `token.expiring`.
    public var room: String?
    /// Present on events that change shared room state.
    public var seq: Int64?
    public var event: ServerEvent

    public init(room: String?, seq: Int64?, event: ServerEvent) {
        self.room = room
        self.seq = seq
        self.event = event
    }

    private enum CodingKeys: String, CodingKey { case ev, room, seq, data }

    private struct DataBox: Encodable {
        let event: ServerEvent
        func encode(to encoder: any Encoder) throws { try event.encodeData(to: encoder) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(event.name, forKey: .ev)
        try c.encodeIfPresent(room, forKey: .room)
        try c.encodeIfPresent(seq, forKey: .seq)
        try c.encode(DataBox(event: event), forKey: .data)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let name = try c.decode(String.self, forKey: .ev)
        room = try c.decodeIfPresent(String.self, forKey: .room)
        seq = try c.decodeIfPresent(Int64.self, forKey: .seq)
        event = try ServerEvent(name: name, data: try c.superDecoder(forKey: .data))
    }
}
