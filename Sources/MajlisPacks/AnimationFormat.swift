/// How an item's animation is drawn: an animated WebP or PNG (`animation`: one file), a Lottie
/// JSON file, or `frames`: still images shown in order at `fps`.
public enum AnimationFormat: String, Sendable, Codable, CaseIterable {
    case webp
    case apng
    case lottie
    case frames

    /// The file name endings the format's files may have.
    var endings: [String] {
        switch self {
        case .webp: return [".webp"]
        case .apng: return [".png", ".apng"]
        case .lottie: return [".json"]
        case .frames: return [".png", ".webp", ".jpg", ".jpeg"]
        }
    }
}
