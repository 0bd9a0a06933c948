import Foundation

/// `manifest.json` at the root of a resource pack (docs/protocol.md section 19): the pack's id,
/// what its items are for, its names by language, and its items.
public struct PackManifest: Sendable, Codable, Equatable {
    public var id: String
    public var kind: PackKind
    public var names: [String: String]
    public var items: [PackItem]

    public init(id: String, kind: PackKind, names: [String: String], items: [PackItem]) {
        self.id = id
        self.kind = kind
        self.names = names
        self.items = items
    }

    /// The most items a pack holds, frames an item has, and bytes its manifest takes.
    public static let maxItems = 1_000
    public static let maxFrames = 600
    public static let maxBytes = 256 << 10
    /// The endings a sound may have.
    static let soundEndings = [".ogg", ".opus", ".mp3", ".m4a", ".aac", ".wav"]

    /// Reads and checks the manifest of `archive`: every rule of the format, and every file it
    /// names present (an item's Lottie file a JSON object too).
    public static func read(from archive: ZipArchive) throws(PackError) -> PackManifest {
        guard let entry = archive.entry(named: "manifest.json") else { throw PackError("the pack has no manifest.json at its root") }
        guard entry.size <= maxBytes else { throw PackError("manifest.json is larger than \(maxBytes) bytes") }
        let manifest: PackManifest
        do {
            manifest = try JSONDecoder().decode(PackManifest.self, from: Data(try archive.data(of: entry)))
        } catch let error as PackError {
            throw error
        } catch {
            throw PackError("manifest.json: \(Self.describe(error))")
        }
        try manifest.check(against: archive)
        return manifest
    }

    func check(against archive: ZipArchive) throws(PackError) {
        try Self.checkId(id, "id")
        try Self.checkNames(names, "names", required: true)
        guard (1...Self.maxItems).contains(items.count) else { throw PackError("items: a pack has 1 to \(Self.maxItems) items") }
        var seen: Set<String> = []
        for item in items {
            try Self.checkId(item.id, "items.id")
            guard seen.insert(item.id).inserted else { throw PackError("items: \(item.id) is there twice") }
            let at = "item \(item.id)"
            if let names = item.names { try Self.checkNames(names, "\(at): names", required: false) }
            switch item.format {
            case .frames:
                guard item.animation == nil else { throw PackError("\(at): frames are listed in frames, not animation") }
                guard let frames = item.frames, (1...Self.maxFrames).contains(frames.count) else {
                    throw PackError("\(at): frames lists 1 to \(Self.maxFrames) images")
                }
                guard (1...60).contains(item.fps ?? 12) else { throw PackError("\(at): fps is 1 to 60") }
            default:
                guard item.frames == nil, item.fps == nil else { throw PackError("\(at): frames and fps are for the frames format") }
                guard item.animation != nil else { throw PackError("\(at): a \(item.format.rawValue) animation names its file in animation") }
            }
            if let duration = item.duration, !(1...60_000).contains(duration) { throw PackError("\(at): duration is 1 to 60000 ms") }
            for file in (item.animation.map { [$0] } ?? []) + (item.frames ?? []) {
                try Self.checkFile(file, endings: item.format.endings, in: archive, at)
            }
            if let sound = item.sound { try Self.checkFile(sound, endings: Self.soundEndings, in: archive, at) }
            if item.format == .lottie, let file = item.animation, let entry = archive.entry(named: file) {
                let object = try? JSONSerialization.jsonObject(with: Data(try archive.data(of: entry)))
                guard object is [String: Any] else { throw PackError("\(at): \(file) is not a Lottie JSON object") }
            }
        }
    }

    /// Ids: 1 to 64 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit.
    static func checkId(_ id: String, _ field: String) throws(PackError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789._-")
        guard (1...64).contains(id.count), id.allSatisfy(allowed.contains), let first = id.first, first.isLetter || first.isNumber else {
            throw PackError("\(field) \"\(id.prefix(80))\": 1 to 64 of a-z, 0-9, '.', '_', '-', starting with a letter or digit")
        }
    }

    /// Names by language tag ("en", "ar", "zh-Hans"): 1 to 32 of them (when `required`), each 1
    /// to 64 characters.
    static func checkNames(_ names: [String: String], _ field: String, required: Bool) throws(PackError) {
        guard names.count <= 32, !required || !names.isEmpty else { throw PackError("\(field): 1 to 32 names, by language") }
        for (language, name) in names {
            guard (2...16).contains(language.count), language.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "-") }) else {
                throw PackError("\(field): \"\(language.prefix(20))\" is not a language tag")
            }
            guard (1...64).contains(name.count) else { throw PackError("\(field).\(language): 1 to 64 characters") }
        }
    }

    static func checkFile(_ file: String, endings: [String], in archive: ZipArchive, _ at: String) throws(PackError) {
        guard endings.contains(where: { file.lowercased().hasSuffix($0) }) else {
            throw PackError("\(at): \(file) is not one of \(endings.joined(separator: ", "))")
        }
        guard archive.entry(named: file) != nil else { throw PackError("\(at): \(file) is not in the pack") }
    }

    /// A decoding error in words: which field, and what was wrong.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "not JSON" }
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(([path(context)] + [key.stringValue]).filter { !$0.isEmpty }.joined(separator: ".")) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "\(path(context)): \(context.debugDescription)"
        case .dataCorrupted(let context): return path(context).isEmpty ? "not JSON" : "\(path(context)): \(context.debugDescription)"
        @unknown default: return "not readable"
        }
    }
}
