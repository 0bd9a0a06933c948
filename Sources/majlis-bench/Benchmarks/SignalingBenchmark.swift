import Foundation
import MajlisCommandLine
import MajlisLab
import MajlisProtocol
import MajlisTransport
import Synchronization

/// `majlis bench signaling`: N clients join one room on a real `majlis serve` (a child process),
/// then it measures the join storm, seat-op round trips and chat fan-out under that load, and
/// the server's memory per connection. Prints figures; asserts nothing.
enum SignalingBenchmark {
    static let help = """
        usage: majlis bench signaling [--clients N] [--arriving N] [--seat-ops N] [--seat-interval-ms MS] [--messages N] [--interval-ms MS] [--loops N] [--no-yardstick]
        First times a 300 µs piece of arithmetic on the idle machine, on a busy thread and right after a 1 ms sleep:
        the latency tail the machine itself adds, below which a server's tail for as much work cannot go.
        Then starts `majlis serve` on a free loopback port, connects N clients (default 2000; at most --arriving, default
        500, between connecting and having joined) to one room and prints:
        join storm time, seat op round trip p50/p99 (N seat ops, default 200, taken and left in pairs, each fanned out to every member;
        paced one per 50 ms, then back to back),
        chat fan-out latency p50/p99 to every member (default 40 messages, one per 100 ms), and the server's
        resident memory per idle connection. Beside each timed phase, the server's own share (from its
        /healthz): from a request's arrival to the write of its answer and of each event it caused; the rest
        is the network and this load generator, which shares the machine's cores (--loops client threads).
        Then the yardstick: the same load on a bare signaling server (it answers at once and writes each event to
        every member, with nothing of Majlis in it), and both servers' p99 side by side.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments, switches: ["no-yardstick"])
        if args.wantsHelp {
            say(help)
            return 0
        }
        let settings = Settings(
            clients: try args.int("clients", default: 2000, range: 2...50_000),
            // Takes and leaves in pairs, so each run leaves every seat as it found it.
            seatOps: (try args.int("seat-ops", default: 200, range: 1...100_000) + 1) / 2 * 2,
            messages: try args.int("messages", default: 40, range: 1...10_000),
            interval: try args.int("interval-ms", default: 100, range: 0...10_000),
            seatInterval: try args.int("seat-interval-ms", default: 50, range: 0...10_000),
            loops: try args.int("loops", default: 2, range: 1...16),
            arriving: try args.int("arriving", default: 500, range: 1...50_000))
        let yardstick = !args.flag("no-yardstick")
        try args.rejectPositional("bench signaling")
        raiseFileLimit()
        say(HostNoise.measure().summary)

        let server = try ServerProcess()
        defer { server.stop() }
        let baseline = server.residentKiB()
        say("majlis bench signaling: \(settings.clients) clients, one room, server pid \(server.pid)")
        var mark = server.writeDelays()
        var queueMark = server.queueWaits()
        let cpuBefore = server.cpuSeconds()
        let majlis = try measure(url: server.url, settings, serverThread: { server.threadId(named: "majlis-ws") }) { phase in
            if phase == .storm {
                let cpu = server.cpuSeconds() - cpuBefore
                say(String(format: "server CPU for the storm (hellos, joins, snapshots, members.changed to everyone): %.2f s, %.0f µs per join",
                           cpu, cpu * 1e6 / Double(settings.clients)))
                let loaded = server.residentKiB()
                say(String(format: "server memory: %.1f MiB before, %.1f MiB with %d members: %.1f KiB per idle connection",
                           Double(baseline) / 1024, Double(loaded) / 1024, settings.clients, Double(loaded - baseline) / Double(settings.clients)))
                mark = server.writeDelays()
                queueMark = server.queueWaits()
            } else {
                say(share(server.writeDelays(), since: &mark))
                if let before = queueMark, let now = server.queueWaits() {
                    let waits = now.subtracting(before)
                    queueMark = now
                    say(String(format: "  of the answer's share, waiting for the room's queue: p50 %.2f ms, p99 %.2f ms (%d ops)",
                               Double(waits.percentile(0.5)) / 1000, Double(waits.percentile(0.99)) / 1000, waits.count))
                }
            }
        }
        guard yardstick else { return 0 }
        // The bare server runs in this process, beside the clients: it needs a descriptor for
        // each of their connections too.
        let needed = 2 * settings.clients + 256
        guard needed <= openFileLimit() else {
            say("bare signaling server (the yardstick): not run, it would need \(needed) file descriptors in this process and the limit is \(openFileLimit())")
            return 0
        }

        // The same load on a bare signaling server, in the same run.
        server.stop()
        let bare = try BareSignalingServer(seatEventBytes: majlis.seatEventBytes)
        defer { bare.stop() }
        say("bare signaling server (the yardstick: answers at once, writes each event to every member; no rooms, rights, store or room threads), same load:")
        var bareMark: (answers: DelayHistogram, events: DelayHistogram)? = bare.writeDelays
        let yard = try measure(url: bare.url, settings, serverThread: { bare.serviceThreadId }) { phase in
            if phase == .storm { bareMark = bare.writeDelays } else { say(share(bare.writeDelays, since: &bareMark)) }
        }
        say("majlis / bare server, p99:")
        say(String(format: "  seat op, paced: %.2f / %.2f ms; back to back: %.2f / %.2f ms; chat fan-out: %.2f / %.2f ms",
                   percentile(majlis.paced, 0.99), percentile(yard.paced, 0.99), percentile(majlis.flat, 0.99), percentile(yard.flat, 0.99),
                   percentile(majlis.chat, 0.99), percentile(yard.chat, 0.99)))
        return 0
    }

    struct Settings {
        var clients, seatOps, messages, interval, seatInterval, loops, arriving: Int
    }

    enum Phase { case storm, paced, flat, chat }

    /// What one server measured.
    struct Figures {
        var paced: [Double] = []
        var flat: [Double] = []
        var chat: [Double] = []
        /// The size of the largest seat event the members heard.
        var seatEventBytes = 0
    }

    /// Runs the phases against the server at `url` and prints each figure; `after` is called
    /// once each phase is done (to print the server's own share of it). `serverThread`: the
    /// kernel id of the server's service thread, if known.
    static func measure(url: String, _ settings: Settings, serverThread: () -> Int32?, after: (Phase) -> Void) throws -> Figures {
        // The members' connections share `loops` client threads; the owner and the twenty members
        // who time seat ops get a thread of their own, as each real user has their own phone.
        let clientLoops = try (0..<settings.loops).map { _ in try WebSocketClient() }
        let controlLoop = try WebSocketClient()
        defer {
            clientLoops.forEach { $0.stop() }
            controlLoop.stop()
        }
        let token = ServerProcess.token
        var figures = Figures()

        // The owner creates the room.
        let owner = BenchClient(user: "owner", token: token("owner"))
        owner.connection = try controlLoop.connect(url: url, delegate: owner)
        try owner.waitUntilSignedIn()
        _ = try owner.call(.create(RoomSettings(title: "Bench", seatCount: 8)), room: "bench")

        // Join storm.
        let start = DispatchTime.now()
        var clients: [BenchClient] = []
        let joinedBefore = BenchClient.joinedCount.load(ordering: .relaxed)
        for index in 1..<settings.clients {
            // At most `arriving` clients are between connecting and having joined, as a crowd
            // arrives over seconds: thousands of handshakes at once outlast a client's 5 s wait
            // for the server's upgrade answer before the server has read them all.
            var waited = 0
            while index - 1 - (BenchClient.joinedCount.load(ordering: .relaxed) - joinedBefore) >= settings.arriving {
                waited += 1
                if waited % 1000 == 0 {
                    if let failed = clients.first(where: { $0.failure != nil }) {
                        throw Arguments.Failure(description: "\(failed.user): \(failed.failure ?? "")")
                    }
                    if waited >= 300_000 { throw Arguments.Failure(description: "timed out: no client joined for 300 s") }
                }
                usleep(1000)
            }
            let client = BenchClient(user: "u\(index)", token: token("u\(index)"), joinRoom: "bench")
            let loop = index <= 20 ? controlLoop : clientLoops[index % settings.loops]
            client.connection = try loop.connect(url: url, delegate: client)
            clients.append(client)
        }
        try BenchClient.waitAll(clients, timeout: 300) { $0.joined }
        let stormSeconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        // Let the server finish announcing the joins and settle before measuring.
        Thread.sleep(forTimeInterval: 3)
        say(String(format: "join storm: %d clients connected, said hello and joined in %.2f s (%.0f joins/s, at most %d arriving at once)",
                   settings.clients, stormSeconds, Double(settings.clients) / stormSeconds, settings.arriving))
        after(.storm)

        // Seat ops under load: every op fans a seat.updated out to every member. Twenty members take
        // turns (take a seat, leave it), so no one connection runs into its request rate limit.
        // Paced (one op per --seat-interval-ms, still far busier than a real room), then back to back
        // (each op sent as soon as the previous one is answered, queueing behind its broadcast).
        func seatRun(pace: Int) throws -> [Double] {
            var times: [Double] = []
            for index in 0..<settings.seatOps {
                let turn = index / 2
                let client = clients[turn % min(20, clients.count)]
                let command: RoomCommand = index % 2 == 0 ? .takeSeat(index: turn % 8) : .leaveSeat
                times.append(try client.call(command, room: "bench"))
                if pace > 0 { Thread.sleep(forTimeInterval: Double(pace) / 1000) }
            }
            return times
        }
        // The crowd's threads stand for 2,000 phones elsewhere, and the timed clients' thread for
        // phones of their own: while seat ops are timed the crowd runs only when no other thread
        // wants a core (idle scheduling: `nice 10` does not make it give way at once), and the
        // timed clients run on a core apart from the server's service thread, as a phone is not on
        // the server's machine. (Either alone left a second mode at about one broadcast's time,
        // 6 ms at 2,000 members, in the bare server's figures as in Majlis's.)
        clientLoops.forEach { ThreadScheduling.setIdle(thread: $0.serviceThreadId, true) }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let server = serverThread()
        if cores >= 2, let server {
            ThreadScheduling.pin(thread: server, to: 0)
            ThreadScheduling.pin(thread: controlLoop.serviceThreadId, to: cores - 1)
        }
        owner.resetLargestEvent()
        figures.paced = try seatRun(pace: settings.seatInterval)
        figures.seatEventBytes = owner.largestEvent
        say(String(format: "seat op round trip, one op every %d ms (%d ops, %d members): p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                   settings.seatInterval, settings.seatOps, settings.clients, percentile(figures.paced, 0.5), percentile(figures.paced, 0.99), figures.paced.max() ?? 0))
        after(.paced)
        figures.flat = try seatRun(pace: 0)
        say(String(format: "seat op round trip, back to back (%d ops, %d members): p50 %.2f ms, p99 %.2f ms, max %.2f ms (%.0f ops/s)",
                   settings.seatOps, settings.clients, percentile(figures.flat, 0.5), percentile(figures.flat, 0.99), figures.flat.max() ?? 0,
                   Double(settings.seatOps) / (figures.flat.reduce(0, +) / 1000)))
        after(.flat)
        clientLoops.forEach { ThreadScheduling.setIdle(thread: $0.serviceThreadId, false) }
        if cores >= 2, let server {
            ThreadScheduling.pin(thread: server, to: nil)
            ThreadScheduling.pin(thread: controlLoop.serviceThreadId, to: nil)
        }
        Thread.sleep(forTimeInterval: 1)

        // Chat fan-out: each message carries its send time; every member records its arrival.
        for client in clients { client.resetChat() }
        for index in 0..<settings.messages {
            let sender = clients[index % clients.count]
            let sentAt = MonotonicClock.nanoseconds()
            sender.send(id: Int64(index + 1_000_000), "chat.send", ["room": "bench", "text": .string("t=\(sentAt)"), "clientMsgId": .string("b\(index)")])
            if settings.interval > 0 { Thread.sleep(forTimeInterval: Double(settings.interval) / 1000) }
        }
        try BenchClient.waitAll(clients, timeout: 120) { $0.chatCount >= settings.messages }
        figures.chat = clients.flatMap { $0.chatLatencies }
        say(String(format: "chat fan-out (%d messages x %d members = %d deliveries): p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                   settings.messages, clients.count, figures.chat.count, percentile(figures.chat, 0.5), percentile(figures.chat, 0.99), figures.chat.max() ?? 0))
        after(.chat)
        return figures
    }

    /// The server's own part of the phase just timed: from each request's arrival to the write
    /// of its answer and of every event it caused, the rest being the network and the load
    /// generator's clients.
    static func share(_ now: (answers: DelayHistogram, events: DelayHistogram)?, since mark: inout (answers: DelayHistogram, events: DelayHistogram)?) -> String {
        guard let before = mark, let now else { return "  server's share: not available" }
        mark = now
        let answers = now.answers.subtracting(before.answers)
        let events = now.events.subtracting(before.events)
        return String(format: "  server's share, arrival to write: answers p50 %.2f ms, p99 %.2f ms; events to every member p50 %.2f ms, p99 %.2f ms (%d writes)",
                      Double(answers.percentile(0.5)) / 1000, Double(answers.percentile(0.99)) / 1000,
                      Double(events.percentile(0.5)) / 1000, Double(events.percentile(0.99)) / 1000, events.count)
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
    }
}
