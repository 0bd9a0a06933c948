import Foundation

/// Zip archives made by Python's `zipfile` (an implementation not ours), for the tests of
/// resource packs.
public enum PackArchives {
    static let script = """
        import sys, zipfile
        out, method = sys.argv[1], sys.argv[2]
        kind = zipfile.ZIP_STORED if method == 'stored' else zipfile.ZIP_DEFLATED
        with zipfile.ZipFile(out, 'w') as archive:
            for pair in sys.argv[3:]:
                name, path = pair.split('=', 1)
                with open(path, 'rb') as f:
                    archive.writestr(zipfile.ZipInfo(name), f.read(), compress_type=kind)
        """

    /// An archive of `files` (name, bytes), in order, stored or deflated.
    public static func zip(_ files: [(String, [UInt8])], deflated: Bool = true) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-pack-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var pairs: [String] = []
        for (index, (name, bytes)) in files.enumerated() {
            let path = "\(directory)/f\(index)"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            pairs.append("\(name)=\(path)")
        }
        let out = "\(directory)/pack.zip"
        let status = try ChildProcess.run(["/usr/bin/python3", "-c", script, out, deflated ? "deflated" : "stored"] + pairs)
        guard status == 0 else { throw CocoaError(.fileWriteUnknown) }
        return Array(try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    /// A manifest's bytes.
    public static func json(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// An emoji pack of three items, one of each kind of animation, and its files.
    public static let manifest = """
        {"id": "classic", "kind": "emoji", "names": {"en": "Classic", "ar": "كلاسيكي"},
         "items": [
           {"id": "laugh", "names": {"en": "Laugh"}, "format": "webp", "animation": "laugh.webp", "sound": "sounds/laugh.ogg"},
           {"id": "clap", "format": "frames", "frames": ["clap/1.png", "clap/2.png"], "fps": 10, "duration": 1500},
           {"id": "heart", "format": "lottie", "animation": "heart.json"}
         ]}
        """

    public static func files(_ manifest: String = manifest) -> [(String, [UInt8])] {
        [
            ("manifest.json", json(manifest)),
            ("laugh.webp", Array(repeating: 0x57, count: 40_000)),
            ("sounds/laugh.ogg", (0..<5_000).map { UInt8($0 % 251) }),
            ("clap/1.png", Array(repeating: 1, count: 300)),
            ("clap/2.png", Array(repeating: 2, count: 300)),
            ("heart.json", json(#"{"v": "5.7.4", "fr": 30, "layers": []}"#)),
        ]
    }
}
