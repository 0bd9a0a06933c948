/// Where a speaker is heard from, around the listener: azimuth in degrees (0 ahead, 90 to the
/// left, -90 to the right, 180 behind), elevation in degrees (up positive), distance in metres.
public struct SpatialPosition: Sendable, Equatable, Codable, Hashable {
    public var azimuth: Double
    public var elevation: Double
    public var distance: Double

    public init(azimuth: Double, elevation: Double = 0, distance: Double = 1.5) {
        self.azimuth = azimuth
        self.elevation = min(90, max(-90, elevation))
        self.distance = min(100, max(0.25, distance))
    }

    /// Seat `index` of `count` around the listener: on an arc in front of them, from their left
    /// (the first seat) to their right, 1.5 m away; a lone seat straight ahead.
    public static func seat(_ index: Int, of count: Int) -> SpatialPosition {
        guard count > 1 else { return SpatialPosition(azimuth: 0) }
        let step = 150.0 / Double(count - 1)
        return SpatialPosition(azimuth: 75 - Double(min(max(0, index), count - 1)) * step)
    }
}
