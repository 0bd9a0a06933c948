import Foundation
import MajlisCommandLine

// `majlis bench` runs this program (`BenchLauncher`); it may be run by itself too.
do {
    exit(try BenchCommand.run(Array(CommandLine.arguments.dropFirst())))
} catch {
    complain("majlis bench: \(error)")
    exit(1)
}
