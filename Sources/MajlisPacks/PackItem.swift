/// One emoji or gift of a pack: its id (unique in the pack), its names by language, and its
/// animation (`format` with `animation`, or `frames` at `fps`), with an optional `sound` and
/// `duration` (ms; how long to show it, else the animation's own length).
public struct PackItem: Sendable, Codable, Equatable {
    public var id: String
    public var names: [String: String]?
    public var format: AnimationFormat
    public var animation: String?
    public var frames: [String]?
    public var fps: Int?
    public var sound: String?
    public var duration: Int?

    public init(
        id: String, names: [String: String]? = nil, format: AnimationFormat, animation: String? = nil, frames: [String]? = nil, fps: Int? = nil,
        sound: String? = nil, duration: Int? = nil
    ) {
        self.id = id
        self.names = names
        self.format = format
        self.animation = animation
        self.frames = frames
        self.fps = fps
        self.sound = sound
        self.duration = duration
    }

    /// The files of the pack it uses.
    public var files: [String] {
        (animation.map { [$0] } ?? []) + (frames ?? []) + (sound.map { [$0] } ?? [])
    }
}
