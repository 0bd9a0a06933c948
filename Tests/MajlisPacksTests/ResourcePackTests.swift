import Foundation
import MajlisPacks
import MajlisTestSupport
import Testing

/// Resource packs (docs/protocol.md section 19): read from archives another implementation
/// made, named by their content, and refused with the reason when anything is wrong.
@Suite struct ResourcePackTests {
    @Test(arguments: [true, false]) func aGoodPackIsReadAndNamedByItsContent(_ deflated: Bool) throws {
        let files = PackArchives.files()
        let bytes = try PackArchives.zip(files, deflated: deflated)
        let pack = try ResourcePack(archive: bytes)
        #expect(pack.sha256 == ResourcePack.sha256(bytes) && ResourcePack.isName(pack.sha256) && pack.size == bytes.count)
        #expect(pack.manifest.id == "classic" && pack.manifest.kind == .emoji && pack.manifest.names["ar"] == "كلاسيكي")
        #expect(pack.manifest.items.map(\.id) == ["laugh", "clap", "heart"])
        #expect(pack.manifest.items[1] == PackItem(id: "clap", format: .frames, frames: ["clap/1.png", "clap/2.png"], fps: 10, duration: 1500))
        #expect(pack.manifest.items[0].files == ["laugh.webp", "sounds/laugh.ogg"])
        let archive = try ZipArchive(bytes)
        #expect(archive.entries.map(\.name) == files.map(\.0))
        for (name, content) in files { #expect(try archive.data(of: #require(archive.entry(named: name))) == content, "\(name)") }
        // Another byte anywhere is another pack.
        var other = files
        other[3].1[0] = 9
        #expect(try ResourcePack(archive: PackArchives.zip(other, deflated: deflated)).sha256 != pack.sha256)
    }

    @Test func sha256IsTheStandardOne() {
        #expect(ResourcePack.sha256(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(!ResourcePack.isName("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD") && !ResourcePack.isName("abc"))
    }

    /// Each manifest that breaks a rule, and the words its refusal has.
    static let badManifests: [(String, String)] = [
        ("not json", "manifest.json: not JSON"),
        (#"{"id": "x", "names": {"en": "X"}, "items": []}"#, "kind is missing"),
        (#"{"id": "Bad Id", "kind": "emoji", "names": {"en": "X"}, "items": [{"id": "a", "format": "webp", "animation": "laugh.webp"}]}"#, #"id "Bad Id""#),
        (#"{"id": "x", "kind": "sticker", "names": {"en": "X"}, "items": []}"#, "manifest.json: kind"),
        (#"{"id": "x", "kind": "gift", "names": {}, "items": [{"id": "a", "format": "webp", "animation": "laugh.webp"}]}"#, "names: 1 to 32 names"),
        (#"{"id": "x", "kind": "gift", "names": {"en": "X"}, "items": []}"#, "a pack has 1 to 1000 items"),
        (#"{"id": "x", "kind": "gift", "names": {"en": "X"}, "items": [{"id": "a", "format": "webp", "animation": "gone.webp"}]}"#, "gone.webp is not in the pack"),
        (#"{"id": "x", "kind": "gift", "names": {"en": "X"}, "items": [{"id": "a", "format": "webp", "animation": "clap/1.png"}]}"#, "clap/1.png is not one of .webp"),
        (#"{"id": "x", "kind": "gift", "names": {"en": "X"}, "items": [{"id": "a", "format": "webp", "animation": "laugh.webp"}, {"id": "a", "format": "webp", "animation": "laugh.webp"}]}"#, "a is there twice"),
        (#"{"id": "x", "kind": "gift", "names": {"en": "X"}, "items": [{"id": "a", "format": "frames"}]}"#, "frames lists 1 to 600 images"),
        (#"{"id": "x", "kind": "gift", "names": {"en": "X"}, "items": [{"id": "a", "format": "frames", "frames": ["clap/1.png"], "fps": 90}]}"#, "fps is 1 to 60"),
        (#"{"id": "x", "kind": "gift", "names": {"en": "X"}, "items": [{"id": "a", "format": "lottie", "animation": "list.json"}]}"#, "list.json is not a Lottie JSON object"),
        (#"{"id": "x", "kind": "gift", "names": {"en": "X"}, "items": [{"id": "a", "format": "webp", "animation": "laugh.webp", "sound": "laugh.webp"}]}"#, "laugh.webp is not one of .ogg"),
    ]

    @Test func manifestsThatBreakARuleAreRefusedWithTheReason() throws {
        for (manifest, words) in Self.badManifests {
            let files = PackArchives.files(manifest) + [("list.json", PackArchives.json("[1, 2]"))]
            #expect(throws: PackError.self, "\(words)") { try ResourcePack(archive: PackArchives.zip(files)) }
            do {
                _ = try ResourcePack(archive: try PackArchives.zip(files))
            } catch let error as PackError {
                #expect(error.reason.contains(words), "\(error.reason) should say \(words)")
            }
        }
    }

    @Test func damagedOrHostileArchivesAreRefusedWithTheReason() throws {
        let good = try PackArchives.zip(PackArchives.files())
        func refusal(_ bytes: [UInt8], limits: ZipArchive.Limits = ZipArchive.Limits()) -> String {
            do {
                _ = try ResourcePack(archive: bytes)
                let archive = try ZipArchive(bytes, limits: limits)
                for entry in archive.entries { _ = try archive.data(of: entry) }
                return "taken"
            } catch {
                return error.reason
            }
        }
        #expect(refusal([]) == "the pack is empty")
        #expect(refusal(Array("PK not really".utf8)).contains("not a zip archive"))
        #expect(refusal(Array(good.prefix(good.count - 30))).contains("not a zip archive"))
        // A byte of the big deflated entry changed: it no longer inflates, or not to its CRC.
        let archive = try ZipArchive(good)
        let laugh = try #require(archive.entry(named: "laugh.webp"))
        var damaged = good
        damaged[laugh.start + laugh.compressedSize / 2] ^= 0xFF
        let reason = refusal(damaged)
        #expect(reason.contains("laugh.webp is damaged") || reason.contains("laugh.webp does not inflate"), "\(reason)")
        // Names that climb out of the folder a pack is unpacked into.
        for name in ["../evil.webp", "/etc/evil.webp", "a/../../evil.webp", "a\\evil.webp"] {
            let hostile = try PackArchives.zip(PackArchives.files() + [(name, [1])])
            #expect(refusal(hostile).contains("a name must be a relative path"), "\(name)")
        }
        // Twice the same name; more than the limits.
        #expect(refusal(try PackArchives.zip(PackArchives.files() + [("laugh.webp", [1])])).contains("laugh.webp is in the archive twice"))
        #expect(refusal(good, limits: ZipArchive.Limits(entries: 10, inflatedBytes: 1_000)).contains("inflates to more than 1000 bytes"))
        #expect(refusal(good, limits: ZipArchive.Limits(entries: 3)).contains("at most 3 are taken"))
    }
}

extension Error {
    var reason: String { (self as? PackError)?.reason ?? "\(self)" }
}
