import Dispatch
import Foundation
import MajlisAudio
import MajlisKit
import MajlisLab
import MajlisProtocol

/// `majlis bench cluster`: what a node's death costs the people in its rooms. Two nodes
/// (`majlis serve` children) share a PostgreSQL database and a Redis server; a speaker and a
/// listener (the SDK, in this process) are in a room on one of them; that node is killed.
enum ClusterBenchmark {
    static let help = """
        usage: majlis bench cluster --postgres URL --redis URL [--runs N]
        Starts two nodes (`majlis serve --postgres URL --redis URL`, children of this process) on the given
        PostgreSQL database and Redis server (scripts/cluster's are postgres://majlis@127.0.0.1:8180/majlis and
        redis://127.0.0.1:8181). In each run a speaker (a 440 Hz tone, on a seat) joins a room at the first node;
        a listener joins it through the second node (refused with `conflict`, the SDK moves to the room's node:
        the time of that join, from connecting to the room's snapshot, is printed beside the same at the room's
        node directly); once the listener hears the speaker, the room's node is killed (SIGKILL). Printed per
        run: the time from the kill until the speaker holds its seat again on the other node, and until the
        listener hears it again; then the median and the largest over --runs (default 10), each run on two new
        nodes.
        """

    struct Run {
        var direct: Double
        var redirected: Double
        var seated: Double
        var heard: Double
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
        try args.rejectPositional("bench cluster")
        say("kill -9 of a room's node, \(runs) runs: ms from the kill until the speaker is on its seat on the other node, and until the listener hears it")
        var results: [Run] = []
        for index in 0..<runs {
            let run = try MediaBenchmark.blocking { try await once(index, postgres: postgres, redis: redis) }
            results.append(run)
            say(String(format: "  run %d: seated again %.0f ms, heard again %.0f ms; join through another node %.0f ms (at the room's node %.0f ms)", index + 1, run.seated, run.heard, run.redirected, run.direct))
        }
        func summary(_ values: [Double]) -> String {
            let sorted = values.sorted()
            return String(format: "median %.0f ms, max %.0f ms", sorted[sorted.count / 2], sorted.last ?? 0)
        }
        say("seated again: \(summary(results.map(\.seated)))")
        say("heard again:  \(summary(results.map(\.heard))) (goal: every run under 5,000 ms, median under 3,000)")
        say("join through another node: \(summary(results.map(\.redirected))); at the room's node: \(summary(results.map(\.direct)))")
        let heard = results.map(\.heard).sorted()
        return heard.last! < 5_000 && heard[heard.count / 2] < 3_000 ? 0 : 1
    }

    private static func milliseconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 }

    /// One run on two new nodes.
    private static func once(_ index: Int, postgres: String, redis: String) async throws -> Run {
        let tag = UUID().uuidString.prefix(6).lowercased()
        func node(_ name: String) throws -> ServerProcess {
            try ServerProcess(extra: ["--postgres", postgres, "--redis", redis, "--node", "bench-\(tag)-\(name)"])
        }
        let doomed = try node("a")
        let survivor = try node("b")
        // Each node reads the registry every second: then the first knows of the second, and
        // names it to the clients it takes.
        try await Task.sleep(for: .milliseconds(1_500))
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
        kill(doomed.pid, SIGKILL)
        var seated: Double?
        guard
            try await waitFor(seconds: 30, {
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
        return Run(direct: direct, redirected: redirected, seated: seated!, heard: heard)
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
