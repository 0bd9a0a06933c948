import Foundation

// EmbedFilesTool OUTPUT ROOT FILE...: writes OUTPUT, a Swift file with each FILE (a path relative
// to ROOT) as base64 text, for the EmbedFiles build plugin.
let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: EmbedFilesTool OUTPUT ROOT FILE...\n".utf8))
    exit(2)
}
let root = URL(fileURLWithPath: arguments[2])
var source = """
    // Made by the EmbedFiles build plugin from the source tree; not edited by hand.

    /// Files of the source tree built into the server: path from the tree's root to base64 contents.
    enum EmbeddedFiles {
        static let base64: [String: String] = [

    """
for path in arguments.dropFirst(3) {
    guard let data = FileManager.default.contents(atPath: root.appendingPathComponent(path).path) else {
        FileHandle.standardError.write(Data("EmbedFilesTool: cannot read \(path)\n".utf8))
        exit(1)
    }
    source += "        \"\(path)\": \"\(data.base64EncodedString())\",\n"
}
source += "    ]\n}\n"
do {
    try source.write(toFile: arguments[1], atomically: true, encoding: .utf8)
} catch {
    FileHandle.standardError.write(Data("EmbedFilesTool: \(error)\n".utf8))
    exit(1)
}
