import Foundation

/// Where resource packs come from (docs/protocol.md section 19): the catalogue, and a pack's
/// archive by its name. `HTTPPackSource` asks a Majlis server; `MemoryPackSource` is its twin in
/// memory, for tests and previews.
public protocol PackSource: Sendable {
    /// The catalogue's JSON (`GET /v1/packs`).
    func catalogue() async throws(MajlisError) -> Data

    /// The archive named `sha256` (`GET /v1/packs/{sha256}`), as it came: the cache checks it.
    func pack(_ sha256: String) async throws(MajlisError) -> Data
}
