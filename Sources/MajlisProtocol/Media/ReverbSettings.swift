/// How a reverb's room sounds (`VoiceEffect.reverb`).
public struct ReverbSettings: Sendable, Equatable, Codable {
    /// 0 (a small room, a short tail) to 1 (a hall).
    public var roomSize: Double
    /// 0 (bright walls) to 1 (soft walls: the tail loses its highs fast).
    public var damping: Double
    /// How much of the room is heard, 0...1; the dry voice stays at `1 - wet / 2`.
    public var wet: Double

    public init(roomSize: Double = 0.5, damping: Double = 0.5, wet: Double = 0.3) {
        self.roomSize = min(1, max(0, roomSize))
        self.damping = min(1, max(0, damping))
        self.wet = min(1, max(0, wet))
    }
}

