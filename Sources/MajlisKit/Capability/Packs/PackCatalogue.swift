import Foundation
import MajlisPacks

/// The server's resource packs now (`GET /v1/packs`, docs/protocol.md section 19): its `version`
/// changes whenever a pack does; each pack's `sha256` is the name to fetch and cache it by.
public struct PackCatalogue: Sendable, Decodable, Equatable {
    public struct Pack: Sendable, Decodable, Equatable {
        public var id: String
        public var sha256: String
        public var kind: PackKind
        public var names: [String: String]
        public var items: [PackItem]
        public var size: Int
    }

    public var version: String
    public var packs: [Pack]

    /// The catalogue `source` has now.
    public static func fetch(from source: any PackSource) async throws(MajlisError) -> PackCatalogue {
        let data = try await source.catalogue()
        do {
            return try JSONDecoder().decode(PackCatalogue.self, from: data)
        } catch {
            throw MajlisError.invalidResponse("the packs' catalogue could not be read: \(error)")
        }
    }

    /// The current emoji pack that has `item`, if one does.
    public func emojiPack(with item: String) -> Pack? {
        packs.first { $0.kind == .emoji && $0.items.contains { $0.id == item } }
    }
}
