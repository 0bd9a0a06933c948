import Foundation
import MajlisCommandLine
import MajlisProtocol
import MajlisTransport
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ClusterBenchmark {
    /// The cost of relaying, in the same runs: a signaling op (`member.list` of a room, through
    /// the room's queue) sent by a member connected to the room's node and by one connected to
    /// the other node (which relays it), each at 25 a second, and a server API op (a room's chat muted or not, through
    /// the room's queue and the store) made at either node; alternating, `calls` of each, three
    /// runs on new nodes. True when the relayed op's p99 is within 2 ms of the direct op's in the
    /// median run, for both.
    static func relay(calls: Int, postgres: String, redis: String) throws -> Bool {
        say("ops at the room's node and through the other node, alternating, \(calls) of each, 3 runs (ms from sending to the answer)")
        var extras: (signaling: [Double], api: [Double]) = ([], [])
        for run in 1...3 {
            let times = try runBlocking { try await relayRun(calls: calls, postgres: postgres, redis: redis) }
            for (name, direct, relayed) in [("signaling", times.signaling.direct, times.signaling.relayed), ("server API", times.api.direct, times.api.relayed)] {
                let p99 = (direct: SignalingBenchmark.percentile(direct, 0.99), relayed: SignalingBenchmark.percentile(relayed, 0.99))
                if name == "signaling" { extras.signaling.append(p99.relayed - p99.direct) } else { extras.api.append(p99.relayed - p99.direct) }
                say(String(
                    format: "  run %d, %@: at the room's node p50 %.2f ms, p99 %.2f ms; relayed p50 %.2f ms, p99 %.2f ms; p99 %+.2f ms", run, name,
                    SignalingBenchmark.percentile(direct, 0.5), p99.direct, SignalingBenchmark.percentile(relayed, 0.5), p99.relayed, p99.relayed - p99.direct))
            }
        }
        var met = true
        for (name, values) in [("signaling", extras.signaling), ("server API", extras.api)] {
            let sorted = values.sorted()
            say(String(format: "%@: relayed p99 minus direct p99 (min / median / max of 3): %.2f / %.2f / %.2f ms (goal: under 2 ms)", name, sorted[0], sorted[1], sorted[2]))
            met = met && sorted[1] < 2
        }
        return met
    }

    private static func relayRun(calls: Int, postgres: String, redis: String) async throws -> (
        signaling: (direct: [Double], relayed: [Double]), api: (direct: [Double], relayed: [Double])
    ) {
        let tag = String(UUID().uuidString.prefix(6)).lowercased()
        let nodes = try await nodes(2, tag: tag, postgres: postgres, redis: redis)
        defer { nodes.forEach { $0.stop() } }
        let admin = ServerProcess.adminToken
        let room = "relay-\(tag)"
        try WebhookBenchmark.post(nodes[0].api + "/rooms", #"{"id":"\#(room)"}"#, token: admin)
        let client = try WebSocketClient()
        defer { client.stop() }
        var members: [BenchClient] = []
        for (index, node) in nodes.enumerated() {
            let member = BenchClient(user: "m\(index)", token: ServerProcess.token("m\(index)"), joinRoom: room)
            member.connection = try client.connect(url: node.url, delegate: member)
            members.append(member)
        }
        try BenchClient.waitAll(members, timeout: 30) { $0.joined }
        var signaling: (direct: [Double], relayed: [Double]) = ([], [])
        var api: (direct: [Double], relayed: [Double]) = ([], [])
        for index in 0..<(2 * calls + 20) {
            // Each member at 25 ops a second: within a session's request rate (50 a second).
            usleep(20_000)
            let milliseconds = try members[index % 2].call(.listMembers(after: nil, limit: 10), room: room)
            guard index >= 20 else { continue }  // connections warm first
            if index % 2 == 0 { signaling.direct.append(milliseconds) } else { signaling.relayed.append(milliseconds) }
        }
        for index in 0..<(2 * calls + 20) {
            let through = nodes[index % 2]
            let started = DispatchTime.now().uptimeNanoseconds
            try WebhookBenchmark.post(through.api + "/rooms/\(room)/mute-chat", #"{"on":\#(index % 4 < 2)}"#, token: admin)
            let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
            guard index >= 20 else { continue }
            if index % 2 == 0 { api.direct.append(milliseconds) } else { api.relayed.append(milliseconds) }
        }
        return (signaling, api)
    }
}
