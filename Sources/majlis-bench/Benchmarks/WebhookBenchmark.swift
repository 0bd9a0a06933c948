import Foundation
import MajlisCommandLine
import MajlisProtocol
import MajlisTransport
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `majlis bench webhooks`: a real `majlis serve` posting webhooks to a receiver in this process.
/// Prints delivery latency (event to receipt) at a paced load, the outbox's throughput on a burst,
/// and beside it a yardstick from the same run: plain POSTs of the same bodies to the same
/// receiver at the same concurrency, with no store and no ordering.
enum WebhookBenchmark {
    static let help = """
        usage: majlis bench webhooks [--rooms N] [--paced-seconds S] [--burst N] [--runs N]
        Starts `majlis serve --webhook` (a child process) and a receiver here. Each event comes from the server
        API muting or unmuting every seat of a room (one event per seat, eight seats a room).
        Paced: about 100 events a second for --paced-seconds (default 5): delivery latency p50/p99, from the
        event to its receipt. Burst: --burst toggles (default 500) over --rooms rooms (default 20) as fast as the
        API takes them: events per second from the first event to the last receipt, and the yardstick (plain
        POSTs per second to the same receiver, 16 at a time) beside it. Every run also checks that each room's
        events arrived in order, none missing. --runs (default 3) repeats it all on a fresh server.
        """

    /// The receiving end: answers 200 at once, keeps when each event arrived.
    final class Receiver: Sendable {
        struct Arrival {
            var room: String
            var seq: Int64
            var time: Int64
            var receivedAt: Int64
        }

        private let arrivals = Mutex<[Arrival]>([])
        private let plain = Atomic<Int>(0)
        let server: WebSocketServer

        init() throws {
            let box = Mutex<Receiver?>(nil)
            server = try WebSocketServer(host: "127.0.0.1", port: 0, delegate: nil) { exchange in
                box.withLock { $0 }?.take(exchange)
            }
            box.withLock { $0 = self }
        }

        var url: String { "http://127.0.0.1:\(server.port)/hooks" }

        private func take(_ exchange: HTTPExchange) {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            if exchange.request.path == "/plain" {
                plain.add(1, ordering: .relaxed)
            } else if let body = try? JSONDecoder().decode(JSONValue.self, from: Data(exchange.request.body)),
                let room = body["room"]?.stringValue, let seq = body["seq"]?.intValue, let time = body["time"]?.intValue
            {
                arrivals.withLock { $0.append(Arrival(room: room, seq: seq, time: time, receivedAt: now)) }
            }
            exchange.respond(HTTPResponse(status: 200, body: Array("{}".utf8)))
        }

        func take() -> [Arrival] { arrivals.withLock { all in defer { all = [] }; return all } }
        var count: Int { arrivals.withLock { $0.count } }
        var plainCount: Int { plain.load(ordering: .relaxed) }
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        let rooms = try args.int("rooms", default: 20, range: 4...1_000)
        let pacedSeconds = try args.int("paced-seconds", default: 5, range: 1...600)
        let burst = try args.int("burst", default: 500, range: 1...100_000)
        let runs = try args.int("runs", default: 3, range: 1...20)
        try args.rejectPositional("bench webhooks")
        say("majlis bench webhooks: \(rooms) rooms of 8 seats, \(runs) runs")
        var lines: [(p50: Double, p99: Double, rate: Double, plain: Double)] = []
        for run in 1...runs {
            let receiver = try Receiver()
            defer { receiver.server.stop() }
            let server = try ServerProcess(extra: ["--webhook", receiver.url, "--webhook-timeout", "5"])
            defer { server.stop() }
            let api = server.api
            let admin = ServerProcess.adminToken
            for index in 0..<rooms { try post(api + "/rooms", #"{"id":"w\#(index)","seatCount":8}"#, token: admin) }
            _ = waitFor(receiver, count: rooms, seconds: 30)
            _ = receiver.take()

            // Paced: one toggle (8 events) every 80 ms, rooms in turn.
            var muted = [Bool](repeating: false, count: rooms)
            let pacedToggles = pacedSeconds * 1000 / 80
            let start = DispatchTime.now().uptimeNanoseconds
            for index in 0..<pacedToggles {
                let room = index % rooms
                muted[room].toggle()
                try post(api + "/rooms/w\(room)/mute-all", #"{"muted":\#(muted[room])}"#, token: admin)
                let next = start + UInt64(index + 1) * 80_000_000
                let now = DispatchTime.now().uptimeNanoseconds
                if next > now { usleep(UInt32((next - now) / 1000)) }
            }
            _ = waitFor(receiver, count: pacedToggles * 8, seconds: 60)
            let paced = receiver.take()
            let latencies = paced.map { Double($0.receivedAt - $0.time) }
            let inOrder = ordered(paced)

            // Burst: as fast as the API takes the toggles; the outbox drains behind.
            // Four producers (rooms split among them), so the API is not what limits the rate.
            let burstStart = Int64(Date().timeIntervalSince1970 * 1000)
            let failures = Atomic<Int>(0)
            let startMuted = muted
            DispatchQueue.concurrentPerform(iterations: 4) { producer in
                let mine = Array(stride(from: producer, to: rooms, by: 4))
                var state = startMuted
                for index in 0..<(burst / 4 + (producer < burst % 4 ? 1 : 0)) {
                    let room = mine[index % mine.count]
                    state[room].toggle()
                    do { try post(api + "/rooms/w\(room)/mute-all", #"{"muted":\#(state[room])}"#, token: admin) } catch { failures.add(1, ordering: .relaxed) }
                }
            }
            let produced = Double(Int64(Date().timeIntervalSince1970 * 1000) - burstStart) / 1000
            let complete = waitFor(receiver, count: (burst - failures.load(ordering: .relaxed)) * 8, seconds: 300)
            let burstArrivals = receiver.take()
            let first = burstArrivals.map(\.time).min() ?? burstStart
            let last = burstArrivals.map(\.receivedAt).max() ?? first
            let rate = Double(burstArrivals.count) / max(0.001, Double(last - first) / 1000)

            // Yardstick: plain POSTs of an event-sized body, 16 at a time, for two seconds.
            let plainRate = plainPosts(to: receiver, body: String(repeating: "x", count: 160), seconds: 2)
            let burstOrdered = ordered(burstArrivals)
            say(
                String(
                    format: "run %d: paced %d events: delivery p50 %.0f ms, p99 %.0f ms | burst %d events (made in %.2f s): %.0f events/s delivered, plain POSTs %.0f/s, ratio %.2f",
                    run, paced.count, SignalingBenchmark.percentile(latencies, 0.5), SignalingBenchmark.percentile(latencies, 0.99),
                    burstArrivals.count, produced, rate, plainRate, rate / max(plainRate, 1))
                    + (complete ? "" : " (incomplete)") + " | in order, none missing: " + (inOrder && burstOrdered ? "yes" : "NO"))
            lines.append((SignalingBenchmark.percentile(latencies, 0.5), SignalingBenchmark.percentile(latencies, 0.99), rate, plainRate))
        }
        if lines.count > 1 {
            func spread(_ values: [Double], _ format: String) -> String {
                String(format: format, values.min() ?? 0, SignalingBenchmark.percentile(values, 0.5), values.max() ?? 0)
            }
            say("over \(lines.count) runs (min / median / max): delivery p99 " + spread(lines.map(\.p99), "%.0f / %.0f / %.0f ms")
                + ", outbox " + spread(lines.map(\.rate), "%.0f / %.0f / %.0f events/s")
                + ", ratio to plain POSTs " + spread(lines.map { $0.rate / max($0.plain, 1) }, "%.2f / %.2f / %.2f"))
        }
        return 0
    }

    /// Whether each room's events arrived with seq 1, 2, 3 ... after the first seen (none missing, none out of order).
    static func ordered(_ arrivals: [Receiver.Arrival]) -> Bool {
        var last: [String: Int64] = [:]
        for arrival in arrivals.sorted(by: { $0.receivedAt < $1.receivedAt }) {
            if let previous = last[arrival.room], arrival.seq != previous + 1 { return false }
            last[arrival.room] = arrival.seq
        }
        return true
    }

    static func waitFor(_ receiver: Receiver, count: Int, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while receiver.count < count {
            if Date() > deadline { return false }
            usleep(5_000)
        }
        return true
    }

    /// One API request, waited for; fails on anything but 2xx.
    static func post(_ url: String, _ body: String, token: String) throws {
        let split = url.range(of: "/v1/")!
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(body.utf8))
        _ = try AdminClient(server: String(url[..<split.lowerBound]), token: token, trusting: nil).call("POST", String(url[split.lowerBound...]), body: value)
    }

    /// Sixteen connections, as the server's webhook client has.
    private static let plainSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 16
        return URLSession(configuration: configuration)
    }()

    /// Plain POSTs to the receiver, 16 in flight, for `seconds`: posts per second.
    static func plainPosts(to receiver: Receiver, body: String, seconds: Double) -> Double {
        let session = plainSession
        let url = URL(string: "http://127.0.0.1:\(receiver.server.port)/plain")!
        let before = receiver.plainCount
        let deadline = Date().addingTimeInterval(seconds)
        let slots = DispatchSemaphore(value: 16)
        let start = Date()
        while Date() < deadline {
            slots.wait()
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            session.dataTask(with: request) { _, _, _ in slots.signal() }.resume()
        }
        for _ in 0..<16 { slots.wait() }
        for _ in 0..<16 { slots.signal() }  // a semaphore must end at its starting value
        return Double(receiver.plainCount - before) / Date().timeIntervalSince(start)
    }
}
