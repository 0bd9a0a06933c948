import Dispatch
import Foundation
import MajlisAudio
import MajlisCommandLine
import MajlisKit
import MajlisLab
import MajlisProtocol

/// `majlis bench cluster`: what a node's death costs the people in its rooms. Two nodes
/// (`majlis serve` children) share a PostgreSQL database and a Redis server; a speaker and a
/// listener (the SDK, in this process) are in a room on one of them; that node is killed.
enum ClusterBenchmark {
    static let help = """
        usage: majlis bench cluster --postgres URL --redis URL [--runs N] [--storm-rooms N] [--storm-members N]
                                    [--burst N] [--relay-calls N] [--only failover|drain|relay|storm|webhooks]
        Starts nodes (`majlis serve --postgres URL --redis URL`, children of this process) on the given PostgreSQL
        database and Redis server (give it a Redis database no running cluster uses, like redis://127.0.0.1:8181/7
        beside scripts/cluster's). Five parts, each on nodes of its own:
        failover: in each of --runs runs (default 10) a speaker (a 440 Hz tone, on a seat) joins a room at the first
          of two nodes; a listener joins it through the second (refused with `conflict`, the SDK moves to the room's
          node: that join's time is printed beside the same join made at the room's node); once the listener hears
          the speaker, the room's node is killed (SIGKILL). Printed: the time from the kill until the speaker holds
          its seat again on the other node, and until the listener hears it again; the median and the largest.
        drain: the same, with the room's node drained (POST /v1/nodes/NODE/drain at the other node) instead.
        relay: a signaling op (member.list) from a member connected to the room's node and from one connected to
          the other of two nodes, which relays it, then a server API op (mute a room's chat) at either node,
          alternating, --relay-calls of each (default 500), three runs: p50 and p99 of each, and how much more
          the relayed op's p99 is.
        storm: --storm-rooms rooms (default 100) of --storm-members members (default 10) join at once, spread over
          three nodes as a load balancer would (member i at node i mod 3), each node relaying a member's join to
          where its room is placed; then the same crowd at one node. Three runs of each, alternating: joins per
          second, join time p50/p99 (from connecting to the snapshot), and how the rooms spread over the nodes.
        webhooks: three nodes post webhooks to a receiver here; --burst mute-all toggles (default 600, 8 events
          each) over 12 rooms placed on all three nodes, made through each room's node, and one node is killed
          (SIGKILL) halfway: events per second delivered, and whether every acknowledged event arrived, each room's
          in order; then the same burst at one node with none killed.
        """

    struct Run {
        var direct: Double
        var redirected: Double
        var seated: Double
        var heard: Double
        /// When the speaker's connection was let go (ms after the kill or the drain request),
        /// once noticed.
        var letGo: Double?
    }

    /// How the room's node goes.
    enum Loss: String {
        case kill = "kill -9"
        case drain = "drain"
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.flag("help") {
            say(help)
            return 0
        }
        guard let postgres = args.string("postgres"), let redis = args.string("redis") else {
            throw Arguments.Failure(description: "--postgres and --redis are required\n\(help)")
        }
        let runs = try args.int("runs", default: 10, range: 1...100)
        let stormRooms = try args.int("storm-rooms", default: 100, range: 1...1_000)
        let stormMembers = try args.int("storm-members", default: 10, range: 1...100)
        let burst = try args.int("burst", default: 600, range: 10...100_000)
        let relayCalls = try args.int("relay-calls", default: 500, range: 10...100_000)
        let only = args.string("only")
        if let only, !["failover", "drain", "relay", "storm", "webhooks"].contains(only) {
            throw Arguments.Failure(description: "--only takes failover, drain, relay, storm or webhooks")
        }
        try args.rejectPositional("bench cluster")
        var met = true
        for loss in [Loss.kill, .drain] where only == nil || only == (loss == .kill ? "failover" : "drain") {
            say("\(loss.rawValue) of a room's node, \(runs) runs: ms from then until the speaker is on its seat on the other node, and until the listener hears it")
            var results: [Run] = []
            for index in 0..<runs {
                let run = try runBlocking { try await once(index, loss: loss, postgres: postgres, redis: redis) }
                results.append(run)
                say(String(format: "  run %d: seated again %.0f ms, heard again %.0f ms; join through another node %.0f ms (at the room's node %.0f ms)", index + 1, run.seated, run.heard, run.redirected, run.direct))
            }
            say("seated again: \(summary(results.map(\.seated)))")
            say("heard again:  \(summary(results.map(\.heard)))" + (loss == .kill ? " (goal: every run under 5,000 ms, median under 3,000)" : ""))
            if loss == .drain {
                let gaps = results.compactMap { run in run.letGo.map { run.heard - $0 } }
                if !gaps.isEmpty { say("audio gap, from the node letting the speaker go to the listener hearing it again: \(summary(gaps))") }
            }
            say("join through another node: \(summary(results.map(\.redirected))); at the room's node: \(summary(results.map(\.direct)))")
            let heard = results.map(\.heard).sorted()
            if loss == .kill { met = met && heard.last! < 5_000 && heard[heard.count / 2] < 3_000 }
        }
        if only == nil || only == "relay" { met = try relay(calls: relayCalls, postgres: postgres, redis: redis) && met }
        if only == nil || only == "storm" { try storm(rooms: stormRooms, members: stormMembers, postgres: postgres, redis: redis) }
        if only == nil || only == "webhooks" { met = try webhooks(burst: burst, postgres: postgres, redis: redis) && met }
        return met ? 0 : 1
    }

    /// "median N ms, max N ms".
    static func summary(_ values: [Double]) -> String {
        let sorted = values.sorted()
        return String(format: "median %.0f ms, max %.0f ms", sorted[sorted.count / 2], sorted.last ?? 0)
    }

    /// `count` nodes of a cluster on `postgres` and `redis` (ids bench-TAG-a, -b, ...), each with
    /// `extra` flags; returned once each knows of the others.
    static func nodes(_ count: Int, tag: String, postgres: String, redis: String, extra: [String] = []) async throws -> [ServerProcess] {
        let nodes = try (0..<count).map { index in
            try ServerProcess(extra: ["--postgres", postgres, "--redis", redis, "--node", "bench-\(tag)-\(["a", "b", "c", "d"][index])"] + extra)
        }
        // Each node reads the registry every second: then each knows of the others, and names
        // them to the clients it takes.
        try await Task.sleep(for: .milliseconds(1_500))
        return nodes
    }

    private static func milliseconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 }

    /// One run on two new nodes.
    private static func once(_ index: Int, loss: Loss, postgres: String, redis: String) async throws -> Run {
        let tag = String(UUID().uuidString.prefix(6)).lowercased()
        let nodes = try await nodes(2, tag: tag, postgres: postgres, redis: redis)
        let (doomed, survivor) = (nodes[0], nodes[1])
        defer {
            doomed.stop()
            survivor.stop()
        }
        let room = "failover-\(tag)"
        let speakerClient = LiveSignalingClient(url: doomed.url, token: ServerProcess.token("speaker-\(tag)"))
        let speakerMedia = try LiveMediaEngine(source: ToneSource(frequency: 440), sink: NullSink())
        let speaker = VoiceRoom(roomId: room, signaling: speakerClient, media: speakerMedia)
        let detector = DetectorSink()
        let listenerClient = LiveSignalingClient(url: survivor.url, token: ServerProcess.token("listener-\(tag)"))
        let listenerMedia = try LiveMediaEngine(source: SilenceSource(), sink: detector)
        let listener = VoiceRoom(roomId: room, signaling: listenerClient, media: listenerMedia)
        defer {
            Task {
                await speakerMedia.stop()
                await listenerMedia.stop()
                await speakerClient.disconnect()
                await listenerClient.disconnect()
            }
        }
        _ = try await speakerClient.connect()
        _ = try await speaker.join(create: RoomSettings(title: "Failover"))
        try await speaker.takeSeat(0)
        try await speaker.setMic(on: true)

        // The same join at the room's node, and through the other node (a refusal, then a new
        // connection at the room's node).
        let visitorClient = LiveSignalingClient(url: doomed.url, token: ServerProcess.token("visitor-\(tag)"))
        var started = DispatchTime.now().uptimeNanoseconds
        _ = try await visitorClient.connect()
        _ = try await VoiceRoom(roomId: room, signaling: visitorClient).join()
        let direct = milliseconds(since: started)
        await visitorClient.disconnect()
        started = DispatchTime.now().uptimeNanoseconds
        _ = try await listenerClient.connect()
        _ = try await listener.join()
        let redirected = milliseconds(since: started)

        guard try await waitFor(seconds: 20, { detector.heardAt != nil }) else {
            throw Arguments.Failure(description: "run \(index + 1): the listener never heard the speaker")
        }
        let killed = DispatchTime.now().uptimeNanoseconds
        switch loss {
        case .kill:
            kill(doomed.pid, SIGKILL)
        case .drain:
            try WebhookBenchmark.post(survivor.api + "/nodes/bench-\(tag)-a/drain", "{}", token: ServerProcess.adminToken)
        }
        var seated: Double?
        var letGo: Double?
        guard
            try await waitFor(seconds: 30, {
                if letGo == nil, await speaker.state.status != .joined { letGo = milliseconds(since: killed) }
                if seated == nil, speakerClient.currentURL == survivor.url, await speaker.state.status == .joined, await speaker.state.mySeat == 0 {
                    seated = milliseconds(since: killed)
                    // What plays from now on crossed the new node (the dead one's last packets
                    // and their concealment played long before).
                    detector.reset()
                }
                return seated != nil && detector.heardAt != nil
            })
        else { throw Arguments.Failure(description: "run \(index + 1): not back within 30 s (seated: \(seated.map { "\(Int($0)) ms" } ?? "no"))") }
        let heard = Double(detector.heardAt! - killed) / 1e6
        return Run(direct: direct, redirected: redirected, seated: seated!, heard: heard, letGo: letGo)
    }

    /// Checks `condition` every 10 ms until it holds (true) or `seconds` pass (false).
    private static func waitFor(seconds: Double, _ condition: () async -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }
}
