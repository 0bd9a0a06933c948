import Foundation
import MajlisCommandLine
import MajlisProtocol
import MajlisTransport

extension ClusterBenchmark {
    /// One crowd's figures.
    struct Storm {
        var seconds: Double
        var joins: [Double]
        var hops: Int
        /// Rooms each node holds afterwards.
        var spread: [Int]
    }

    /// The join storm: the same crowd at three nodes and at one, three runs of each, alternating.
    static func storm(rooms: Int, members: Int, postgres: String, redis: String) throws {
        say("join storm: \(rooms) rooms of \(members) members (\(rooms * members) clients, at most 100 connecting at once)")
        var results: [Int: [Storm]] = [1: [], 3: []]
        for run in 1...3 {
            for count in [3, 1] {
                let storm = try runBlocking { try await crowd(nodes: count, rooms: rooms, members: members, postgres: postgres, redis: redis) }
                results[count]!.append(storm)
                say(String(
                    format: "  run %d, %d node%@: %.2f s, %.0f joins/s, join p50 %.1f ms, p99 %.1f ms; %d moved to their room's node; rooms per node %@",
                    run, count, count == 1 ? "" : "s", storm.seconds, Double(storm.joins.count) / storm.seconds,
                    SignalingBenchmark.percentile(storm.joins, 0.5), SignalingBenchmark.percentile(storm.joins, 0.99), storm.hops,
                    storm.spread.map(String.init).joined(separator: "/")))
            }
        }
        for count in [3, 1] {
            let runs = results[count]!
            let rates = runs.map { Double($0.joins.count) / $0.seconds }
            say(String(
                format: "%d node%@ (min / median / max of 3): %.0f / %.0f / %.0f joins/s, join p99 %.1f / %.1f / %.1f ms",
                count, count == 1 ? "" : "s", rates.min()!, SignalingBenchmark.percentile(rates, 0.5), rates.max()!,
                runs.map { SignalingBenchmark.percentile($0.joins, 0.99) }.min()!,
                SignalingBenchmark.percentile(runs.map { SignalingBenchmark.percentile($0.joins, 0.99) }, 0.5),
                runs.map { SignalingBenchmark.percentile($0.joins, 0.99) }.max()!))
        }
    }

    /// One crowd on `count` new nodes: member i of room r connects to node (r * members + i) mod count.
    private static func crowd(nodes count: Int, rooms: Int, members: Int, postgres: String, redis: String) async throws -> Storm {
        let tag = String(UUID().uuidString.prefix(6)).lowercased()
        let nodes = try await nodes(count, tag: tag, postgres: postgres, redis: redis)
        defer { nodes.forEach { $0.stop() } }
        let loops = try (0..<2).map { _ in try WebSocketClient() }
        defer { loops.forEach { $0.stop() } }
        let started = Date()
        var clients: [StormClient] = []
        for index in 0..<(rooms * members) {
            // As a crowd arrives over seconds: at most 100 between connecting and joined.
            while clients.count - clients.count(where: { $0.joinedAfter != nil }) >= 100 {
                if let failed = clients.first(where: { $0.failure != nil }) {
                    throw Arguments.Failure(description: "\(failed.user): \(failed.failure ?? "")")
                }
                try await Task.sleep(for: .milliseconds(1))
            }
            let user = "s\(tag)-\(index)"
            clients.append(try StormClient(
                user: user, token: ServerProcess.token(user), room: "storm-\(tag)-\(index / members)", loop: loops[index % 2],
                url: nodes[index % count].url))
        }
        let deadline = Date().addingTimeInterval(120)
        while clients.contains(where: { $0.joinedAfter == nil }) {
            if let failed = clients.first(where: { $0.failure != nil }) {
                throw Arguments.Failure(description: "\(failed.user): \(failed.failure ?? "")")
            }
            guard Date() < deadline else { throw Arguments.Failure(description: "the storm did not finish within 120 s") }
            try await Task.sleep(for: .milliseconds(2))
        }
        let seconds = Date().timeIntervalSince(started)
        let spread = nodes.map { Int($0.health()?["cluster"]?["roomsHeld"]?.intValue ?? -1) }
        clients.forEach { $0.close() }
        return Storm(seconds: seconds, joins: clients.compactMap(\.joinedAfter), hops: clients.reduce(0) { $0 + $1.hops }, spread: spread)
    }
}
