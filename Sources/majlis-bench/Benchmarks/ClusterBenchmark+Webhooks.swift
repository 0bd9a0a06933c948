import Foundation
import MajlisCommandLine
import MajlisProtocol
import Synchronization

extension ClusterBenchmark {
    /// Webhooks from three nodes, one killed halfway, then from one node: true when every
    /// acknowledged event arrived, each room's in order.
    static func webhooks(burst: Int, postgres: String, redis: String) throws -> Bool {
        say("webhooks: \(burst) mute-all toggles (8 events each) over 12 rooms, 4 at a time, through each room's node")
        var complete = true
        for count in [3, 1] {
            let receiver = try WebhookBenchmark.Receiver()
            defer { receiver.server.stop() }
            let outcome = try runBlocking {
                try await deliveries(nodes: count, burst: burst, receiver: receiver, postgres: postgres, redis: redis)
            }
            complete = complete && outcome
        }
        return complete
    }

    /// One burst on `count` new nodes (the last killed halfway when there are several).
    private static func deliveries(nodes count: Int, burst: Int, receiver: WebhookBenchmark.Receiver, postgres: String, redis: String) async throws -> Bool {
        let tag = String(UUID().uuidString.prefix(6)).lowercased()
        let nodes = try await nodes(count, tag: tag, postgres: postgres, redis: redis, extra: ["--webhook", receiver.url, "--webhook-timeout", "5"])
        defer { nodes.forEach { $0.stop() } }
        let admin = ServerProcess.adminToken
        let rooms = 12
        // The server API opens each room where it is called: room r on node r mod count.
        for room in 0..<rooms {
            try WebhookBenchmark.post(nodes[room % count].api + "/rooms", #"{"id":"w\#(tag)-\#(room)","seatCount":8}"#, token: admin)
        }
        _ = WebhookBenchmark.waitFor(receiver, count: rooms, seconds: 30)
        _ = receiver.take()

        // Four producers, each toggling three rooms through their nodes; the last node is
        // killed once half the toggles are made.
        let acknowledged = Mutex<[String: Int]>([:])
        let made = Atomic<Int>(0)
        let killedAt = Mutex<Int64?>(nil)
        let doomed = count > 1 ? nodes[count - 1].pid : nil
        let apis = nodes.map(\.api)
        let started = Int64(Date().timeIntervalSince1970 * 1000)
        DispatchQueue.concurrentPerform(iterations: 4) { producer in
            let mine = Array(stride(from: producer, to: rooms, by: 4))
            var muted = [Bool](repeating: false, count: rooms)
            for index in 0..<(burst / 4) {
                let room = mine[index % mine.count]
                muted[room].toggle()
                if made.add(1, ordering: .relaxed).newValue == burst / 2, let doomed {
                    kill(doomed, SIGKILL)
                    killedAt.withLock { $0 = Int64(Date().timeIntervalSince1970 * 1000) }
                }
                let id = "w\(tag)-\(room)"
                do {
                    try WebhookBenchmark.post(apis[room % count] + "/rooms/\(id)/mute-all", #"{"muted":\#(muted[room])}"#, token: admin)
                    acknowledged.withLock { $0[id, default: 0] += 8 }
                } catch {
                    // The node was killed: this toggle was not acknowledged.
                }
            }
        }
        let produced = Double(Int64(Date().timeIntervalSince1970 * 1000) - started) / 1000
        let expected = acknowledged.withLock { $0 }
        var arrivals: [WebhookBenchmark.Receiver.Arrival] = []
        var firstSeen: [String: Set<Int64>] = [:]
        let deadline = Date().addingTimeInterval(120)
        // Until every acknowledged event of every room has arrived (duplicates aside: a post a
        // node made as it died is made again by another).
        while expected.contains(where: { firstSeen[$0.key, default: []].count < $0.value }), Date() < deadline {
            for arrival in receiver.take() {
                arrivals.append(arrival)
                firstSeen[arrival.room, default: []].insert(arrival.seq)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        arrivals += receiver.take()
        // In order: each room's events first arrived in seq order, none skipped.
        var last: [String: Int64] = [:]
        var ordered = true
        var unique = 0
        for arrival in arrivals.sorted(by: { $0.receivedAt < $1.receivedAt }) {
            if let previous = last[arrival.room], arrival.seq <= previous { continue }  // a repeat
            if let previous = last[arrival.room], arrival.seq != previous + 1 { ordered = false }
            last[arrival.room] = arrival.seq
            unique += 1
        }
        // The longest a room's deliveries paused (a dead node's claim running out shows here).
        var pause: (room: String, seconds: Double) = ("", 0)
        for (room, list) in Dictionary(grouping: arrivals, by: \.room) {
            let times = list.map(\.receivedAt).sorted()
            for (a, b) in zip(times, times.dropFirst()) where Double(b - a) / 1000 > pause.seconds { pause = (room, Double(b - a) / 1000) }
        }
        let missing = expected.reduce(0) { $0 + max(0, $1.value - (firstSeen[$1.key]?.count ?? 0)) }
        let end = arrivals.map(\.receivedAt).max() ?? started
        let acknowledgedCount = expected.values.reduce(0, +)
        var line = String(
            format: "  %d node%@: %d events acknowledged (made in %.2f s), %d delivered (%d repeats) in %.2f s: %.0f events/s", count, count == 1 ? "" : "s",
            acknowledgedCount, produced, unique, arrivals.count - unique, Double(end - started) / 1000, Double(unique) / max(0.001, Double(end - started) / 1000))
        if let killed = killedAt.withLock({ $0 }) {
            line += String(format: "; node %@ killed %.2f s in, the last event delivered %.2f s after the kill", "bench-\(tag)-\(["a", "b", "c"][count - 1])",
                Double(killed - started) / 1000, Double(end - killed) / 1000)
        }
        line += String(format: "; longest pause in a room's deliveries %.1f s (%@)", pause.seconds, pause.room)
        say(line + "; every acknowledged event arrived: " + (missing == 0 ? "yes" : "NO (\(missing) missing)") + ", each room's in order: " + (ordered ? "yes" : "NO"))
        return missing == 0 && ordered
    }
}
