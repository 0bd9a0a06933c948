import Foundation
import MajlisCommandLine

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `majlis bench`: the benchmarks are a program of their own, `majlis-bench`, built beside this
/// one (`swift build -c release --product majlis-bench`), so that the server's binary does not
/// carry the harness they drive. This runs it in this process's place, with the same arguments.
enum BenchLauncher {
    static func run(_ arguments: [String]) -> Int32 {
        let path = siblingExecutable("majlis-bench")
        guard FileManager.default.isExecutableFile(atPath: path) else {
            complain("majlis bench: the benchmarks are a program of their own, not built here: swift build -c release --product majlis-bench (\(path))")
            return 2
        }
        var argv: [UnsafeMutablePointer<CChar>?] = (["majlis-bench"] + arguments).map { strdup($0) } + [nil]
        execv(path, &argv)
        complain("majlis bench: cannot run \(path): \(String(cString: strerror(errno)))")
        return 1
    }
}
