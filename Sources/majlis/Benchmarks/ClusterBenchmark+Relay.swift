import Foundation
import MajlisProtocol
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ClusterBenchmark {
    /// The cost of relaying: the same server API op (a room's chat muted or not, through the
    /// room's queue and the store) made at the room's node and at the other node (which relays
    /// it), alternating, `calls` of each, three runs on new nodes. True when the relayed op's p99
    /// is within 2 ms of the direct op's in the median run.
    static func relay(calls: Int, postgres: String, redis: String) throws -> Bool {
        say("an API op at the room's node and through the other node, alternating, \(calls) of each, 3 runs (ms from sending to the answer)")
        var extras: [Double] = []
        for run in 1...3 {
            let (direct, relayed) = try MediaBenchmark.blocking { try await relayRun(calls: calls, postgres: postgres, redis: redis) }
            let p99 = (direct: SignalingBenchmark.percentile(direct, 0.99), relayed: SignalingBenchmark.percentile(relayed, 0.99))
            extras.append(p99.relayed - p99.direct)
            say(String(
                format: "  run %d: at the room's node p50 %.2f ms, p99 %.2f ms; relayed p50 %.2f ms, p99 %.2f ms; p99 %+.2f ms", run,
                SignalingBenchmark.percentile(direct, 0.5), p99.direct, SignalingBenchmark.percentile(relayed, 0.5), p99.relayed, p99.relayed - p99.direct))
        }
        let median = extras.sorted()[1]
        say(String(format: "relayed p99 minus direct p99 (min / median / max of 3): %.2f / %.2f / %.2f ms (goal: under 2 ms)", extras.min()!, median, extras.max()!))
        return median < 2
    }

    private static func relayRun(calls: Int, postgres: String, redis: String) async throws -> (direct: [Double], relayed: [Double]) {
        let tag = String(UUID().uuidString.prefix(6)).lowercased()
        let nodes = try await nodes(2, tag: tag, postgres: postgres, redis: redis)
        defer { nodes.forEach { $0.stop() } }
        let admin = ServerProcess.adminToken
        let room = "relay-\(tag)"
        try WebhookBenchmark.post(nodes[0].api + "/rooms", #"{"id":"\#(room)"}"#, token: admin)
        var direct: [Double] = []
        var relayed: [Double] = []
        for index in 0..<(2 * calls + 20) {
            let through = nodes[index % 2]
            let started = DispatchTime.now().uptimeNanoseconds
            try WebhookBenchmark.post(through.api + "/rooms/\(room)/mute-chat", #"{"on":\#(index % 4 < 2)}"#, token: admin)
            let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
            guard index >= 20 else { continue }  // connections warm first
            if index % 2 == 0 { direct.append(milliseconds) } else { relayed.append(milliseconds) }
        }
        return (direct, relayed)
    }
}
