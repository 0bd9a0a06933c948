import Foundation
import PackagePlugin

/// Builds the web app (every file under `Web/`) and the server API's document
/// (`docs/openapi.yaml`) into the server target, so a copied or installed `majlis` serves them
/// without the source tree.
@main struct EmbedFiles: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        var files: [String] = []
        let web = root.appending(path: "Web")
        if let walker = FileManager.default.enumerator(at: web, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                files.append(String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1)))
            }
        }
        files.append("docs/openapi.yaml")
        files.sort()
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) files of the web app and the API document",
                executable: try context.tool(named: "EmbedFilesTool").url,
                arguments: [output.path, root.path] + files,
                inputFiles: files.map { root.appending(path: $0) },
                outputFiles: [output])
        ]
    }
}
