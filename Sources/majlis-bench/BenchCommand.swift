import Foundation
import MajlisCommandLine

/// `majlis bench`: benchmarks that print figures.
enum BenchCommand {
    static let help = """
        usage: majlis bench signaling|media|mouth-to-ear|quality|webhooks|cluster|audio|attacks|messaging [flags]   (each has --help)
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let which = arguments.first, which != "--help", which != "-h" else {
            say(help)
            return 0
        }
        switch which {
        case "signaling": return try SignalingBenchmark.run(Array(arguments.dropFirst()))
        case "media": return try MediaBenchmark.run(Array(arguments.dropFirst()))
        case "mouth-to-ear": return try MouthToEarBenchmark.run(Array(arguments.dropFirst()))
        case "quality": return try QualityBenchmark.run(Array(arguments.dropFirst()))
        case "webhooks": return try WebhookBenchmark.run(Array(arguments.dropFirst()))
        case "cluster": return try ClusterBenchmark.run(Array(arguments.dropFirst()))
        case "audio": return try AudioBenchmark.run(Array(arguments.dropFirst()))
        case "attacks": return try AttackBenchmark.run(Array(arguments.dropFirst()))
        case "messaging": return try MessagingBenchmark.run(Array(arguments.dropFirst()))
        default: throw Arguments.Failure(description: "unknown benchmark '\(which)'\n\(help)")
        }
    }
}
