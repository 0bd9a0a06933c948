import Foundation

/// The path of the program `name` installed beside the running one (`majlis` and
/// `majlis-bench` are built into the same folder): each finds the other there.
public func siblingExecutable(_ name: String) -> String {
    let running = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: running).deletingLastPathComponent().appendingPathComponent(name).path
}
