import Foundation
import MajlisCommandLine
import MajlisForwarding
import MajlisLab
import MajlisProtocol
import MajlisTransport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `majlis bench attacks`: a live room's forwarding while each attack of docs/protocol.md
/// section 16 runs beside it, against its own quiet spell just before; and what each attack
/// makes the server send for what the attacker sends.
enum AttackBenchmark {
    static let help = """
        usage: majlis bench attacks [--listeners N] [--seconds S] [--runs R]
        Starts `majlis serve` with a live room (one speaker sending a stamped 100-byte packet every 20 ms to N native
        listeners, default 20) and an arena of 20 members. Each attack runs in the arena for S seconds (default 5), right
        after a quiet spell as long: a seated member flooding 1,200-byte packets a thousand a second; a seated member
        whose packets skip 16 sequence numbers with 16 RED copies each; 4 KiB signals as fast as requests allow; syncs
        of the arena (56 KB of attributes) as fast as requests allow; 40 users starting 10 Mb/s probes; an echo test
        sending SRTP under 150,000 SSRCs; 49 KB SDP offers of 10,000 formats. For each, R runs (default 3): the live
        room's send-to-receive p99 in the quiet spell and under the attack (receivers poll every millisecond), and what
        the server sent (to the arena, the attacker and its probes) beside what the attacker sent. The server's
        resident memory is printed before and after the SSRC spray. First, the time to read WebRTC offers that grow
        (more sections; one section with more formats and attributes), per kilobyte: constant where reading is linear.
        """

    /// One attack's run: it goes on while `running`, counting the bytes it sends in `sent`
    /// and what the server sends its own sockets in `received`.
    final class Run: Sendable {
        let running = Atomic<Bool>(true)
        let sent = Atomic<Int>(0)
        let received = Atomic<Int>(0)
    }

    struct Attack {
        var name: String
        /// Runs the attack on the calling thread until `run.running` is false.
        var body: @Sendable (Run, _ round: Int) -> Void
    }

    /// Times `WebRTCOffer(sdp:)` on offers growing in two ways: a browser's offer with more
    /// receive sections, and one section listing more formats with an rtpmap and an fmtp line
    /// each (the product of the two once made reading quadratic). The fastest of 30 readings of
    /// each, per kilobyte: the same figure at every size is linear.
    static func sdpReading() throws {
        let browser = try WebRTCClient()
        func time(_ sdp: String) -> Double {
            var best = Double.infinity
            for _ in 0..<30 {
                let start = MediaBenchmark.now()
                _ = try? WebRTCOffer(sdp: sdp)
                best = min(best, Double(MediaBenchmark.now() - start) / 1_000)
            }
            return best
        }
        func line(_ what: String, _ offers: [(String, String)]) {
            let figures = offers.map { label, sdp in (label, Double(sdp.utf8.count) / 1000, time(sdp)) }
            let perKB = figures.map { $0.2 / $0.1 }
            say("reading offers, \(what): " + figures.map { String(format: "%@ %.1f KB %.0f µs", $0.0, $0.1, $0.2) }.joined(separator: ", ")
                + String(format: "; per KB %.1f to %.1f µs (largest / smallest %.2f)", perKB.min() ?? 0, perKB.max() ?? 0, (perKB.last ?? 0) / max(perKB.first ?? 1, 0.001)))
        }
        line("more sections", [4, 8, 16, 32, 64].map { ("\($0) seats", browser.offer(seats: $0)) })
        let base = browser.offer(seats: 1)
        line("one section, more formats and attributes", [16, 32, 64, 125].map { count -> (String, String) in
            let formats = (0..<count).map { String($0) }
            var lines = base.components(separatedBy: "\r\n")
            guard let first = lines.firstIndex(where: { $0.hasPrefix("m=audio") }) else { return ("\(count) formats", base) }
            lines[first] = "m=audio 9 UDP/TLS/RTP/SAVPF " + formats.joined(separator: " ")
            lines.insert(contentsOf: formats.flatMap { ["a=rtpmap:\($0) opus/48000/2", "a=fmtp:\($0) minptime=10;useinbandfec=1"] }, at: first + 1)
            return ("\(count) formats", lines.joined(separator: "\r\n"))
        })
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        let listenerCount = try args.int("listeners", default: 20, range: 1...500)
        let seconds = try args.int("seconds", default: 5, range: 1...120)
        let runs = try args.int("runs", default: 3, range: 1...20)
        try args.rejectPositional("bench attacks")
        raiseFileLimit()
        say(HostNoise.measure().summary)
        try sdpReading()
        let server = try ServerProcess()
        defer { server.stop() }
        let signaling = try WebSocketClient()
        defer { signaling.stop() }
        let url = server.url
        let pid = server.pid
        @Sendable func resident() -> Int { ServerProcess.residentKiB(pid: pid) }
        let clients = Mutex<[BenchClient]>([])
        defer { withExtendedLifetime(clients) {} }
        @Sendable func signIn(_ user: String) throws -> BenchClient {
            let client = BenchClient(user: user, token: ServerProcess.token(user))
            client.connection = try signaling.connect(url: url, delegate: client)
            clients.withLock { $0.append(client) }
            try client.waitUntilSignedIn()
            return client
        }
        @Sendable func media(_ answer: JSONValue, bind: Bool = true) throws -> RawMediaClient {
            guard let settings = MediaSettings(answer["media"]) else { throw Arguments.Failure(description: "an answer without media: \(answer)") }
            let client = try RawMediaClient(settings: settings, receiveTimeoutMilliseconds: 200)
            guard !bind || client.bind() else { throw Arguments.Failure(description: "a media binding got no answer") }
            return client
        }
        func member(_ user: String, room: String, seat: Int? = nil) throws -> (BenchClient, RawMediaClient) {
            let client = try signIn(user)
            let joined = try client.request(.join(create: RoomSettings()), room: room)
            if let seat { _ = try client.call(.takeSeat(index: seat), room: room) }
            return (client, try media(joined))
        }

        let speaker = try member("speaker", room: "live", seat: 0).1
        let live = try (0..<listenerCount).map { try member("l\($0)", room: "live").1 }
        let arenaMembers = try (0..<20).map { try member("a\($0)", room: "arena") }
        let arena = arenaMembers.map(\.1)
        let arenaClients = arenaMembers.map(\.0)
        let value = String(repeating: "v", count: 8_000)
        _ = try arenaClients[0].call("attr.set", ["room": "arena", "attrs": .object(Dictionary(uniqueKeysWithValues: (0..<7).map { ("k\($0)", JSONValue.string(value)) }))])
        let flooder = try member("flooder", room: "arena", seat: 1).1
        let skipper = try member("skipper", room: "arena", seat: 2).1
        let signaler = try member("signaler", room: "arena").0
        let reader = try member("reader", room: "arena").0

        // The live room runs throughout: a packet every 20 ms, its copies timed per phase.
        let alive = Atomic<Bool>(true)
        let phase = Atomic<Int>(0)
        let latencies = Mutex<[Int: [Double]]>([:])
        let arenaBytes = Atomic<Int>(0)
        let threads = DispatchGroup()
        threads.enter()
        Thread.detachNewThread {
            var next = MediaBenchmark.now()
            while alive.load(ordering: .relaxed) {
                var payload = [UInt8](repeating: 0xAB, count: 100)
                let stamp = MediaBenchmark.now()
                for byte in 0..<8 { payload[byte] = UInt8(stamp >> (56 - 8 * UInt64(byte)) & 0xFF) }
                try? speaker.send(payload)
                next += 20_000_000
                let wait = Int64(next) - Int64(MediaBenchmark.now())
                if wait > 0 { usleep(UInt32(wait / 1000)) }
            }
            threads.leave()
        }
        threads.enter()
        Thread.detachNewThread {
            var local: [Double] = []
            var scratch = [UInt8](repeating: 0, count: 2_048)
            var localPhase = phase.load(ordering: .relaxed)
            while alive.load(ordering: .relaxed) {
                for listener in live {
                    while let packet = try? listener.receive(wait: false) {
                        let arrived = MediaBenchmark.now()
                        guard packet.payload.count >= 8 else { continue }
                        let sent = packet.payload.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                        local.append(Double(arrived &- sent) / 1e6)
                    }
                }
                for member in arena {
                    while let datagram = member.socket.receive(into: &scratch, wait: false) { arenaBytes.add(datagram.length, ordering: .relaxed) }
                }
                let now = phase.load(ordering: .relaxed)
                if now != localPhase {
                    let done = local
                    latencies.withLock { $0[localPhase, default: []] += done }
                    local = []
                    localPhase = now
                }
                usleep(1_000)
            }
            threads.leave()
        }

        let attacks = [
            Attack(name: "media flood: 1,200-byte packets, 1,000 a second, from a seat") { run, _ in
                let payload = [0x08] + [UInt8](repeating: 7, count: 1_199)
                while run.running.load(ordering: .relaxed) {
                    try? flooder.send(payload)
                    run.sent.add(1_200 + 40, ordering: .relaxed)
                    usleep(1_000)
                }
            },
            Attack(name: "RED skips: numbers 16 apart, 16 copies a packet, 50 a second") { run, _ in
                var sequence: UInt16 = .random(in: 0...UInt16.max)
                var timestamp: UInt32 = 0
                let blocks = (1...16).map { REDPayload.Block(payloadType: 111, timestampOffset: UInt16($0 * 960), data: [UInt8](repeating: UInt8($0), count: 60)) }
                let red = REDPayload(redundant: blocks, primaryPayloadType: 111, primary: [0x08] + [UInt8](repeating: 1, count: 59)).serialized()
                while run.running.load(ordering: .relaxed) {
                    sequence &+= 16
                    timestamp &+= 960
                    let packet = RTPPacket(payloadType: 63, sequenceNumber: sequence, timestamp: timestamp, ssrc: skipper.ssrc,
                                           extensions: [RTPPacket.audioLevelExtension(id: 1, voice: true, level: 30)], payload: red)
                    if let secured = try? skipper.outbound.protect(rtp: packet.serialized()) {
                        skipper.socket.send(secured, to: skipper.server)
                        run.sent.add(secured.count, ordering: .relaxed)
                    }
                    usleep(20_000)
                }
            },
            Attack(name: "signals: 4 KiB to the arena, 50 requests a second") { run, _ in
                let payload = String(repeating: "s", count: 4_000)
                var id = 1_000_000
                while run.running.load(ordering: .relaxed) {
                    id += 1
                    let sent = signaler.send(id: Int64(id), "signal.send", ["room": "arena", "to": "room", "type": "blob", "payload": .string(payload)])
                    run.sent.add(sent, ordering: .relaxed)
                    usleep(20_000)
                }
            },
            Attack(name: "syncs of the arena (56 KB of attributes), 50 a second") { run, _ in
                let before = reader.bytesReceived.load(ordering: .relaxed)
                var id = 1_000_000
                while run.running.load(ordering: .relaxed) {
                    id += 1
                    run.sent.add(reader.send(id: Int64(id), "room.sync", ["room": "arena"]), ordering: .relaxed)
                    usleep(20_000)
                }
                run.received.add(reader.bytesReceived.load(ordering: .relaxed) - before, ordering: .relaxed)
            },
            Attack(name: "probes: 40 users ask for 10 Mb/s each") { run, round in
                let probes = Mutex<[RawMediaClient]>([])
                let started = DispatchGroup()
                for index in 0..<40 {
                    started.enter()
                    Thread.detachNewThread {
                        defer { started.leave() }
                        guard let client = try? signIn("probe\(round)-\(index)") else { return }
                        run.sent.add(RequestEncoder.frame(id: 0, op: "probe.start", args: ["down": 10_000_000]).count, ordering: .relaxed)
                        guard let answer = try? client.request("probe.start", ["down": 10_000_000]), let prober = try? media(answer, bind: false) else { return }
                        probes.withLock { $0.append(prober) }
                        _ = prober.bind()
                    }
                }
                started.wait()
                var buffer = [UInt8](repeating: 0, count: 2_048)
                while run.running.load(ordering: .relaxed) {
                    for prober in probes.withLock({ $0 }) {
                        while let datagram = prober.socket.receive(into: &buffer, wait: false) { run.received.add(datagram.length, ordering: .relaxed) }
                    }
                    usleep(1_000)
                }
            },
            Attack(name: "SSRC spray: SRTP under 150,000 SSRCs on an echo test") { run, round in
                guard let client = try? signIn("echo\(round)"), let answer = try? client.request("echo.start", ["delay": 2000]),
                    let echo = try? media(answer), let spray = try? SRTPSession(key: echo.key, direction: .outbound)
                else { return }
                let before = resident()
                var count = 0
                while run.running.load(ordering: .relaxed) && count < 150_000 {
                    for _ in 0..<30 {
                        count += 1
                        let packet = RTPPacket(payloadType: 111, sequenceNumber: 1, timestamp: 960, ssrc: .random(in: 0x1000...UInt32.max), payload: [0x08, 1, 2, 3])
                        if let secured = try? spray.protect(rtp: packet.serialized()) {
                            echo.socket.send(secured, to: echo.server)
                            run.sent.add(secured.count, ordering: .relaxed)
                        }
                    }
                    usleep(1_000)
                }
                while run.running.load(ordering: .relaxed) { usleep(10_000) }
                say("    server resident memory \(before / 1024) MiB before the spray, \(resident() / 1024) MiB after \(count) SSRCs")
            },
            Attack(name: "SDP offers: 49 KB, 10,000 formats, on echo.start, 50 a second") { run, round in
                guard let client = try? signIn("offerer\(round)") else { return }
                let formats = (0..<10_000).map { String(96 + $0 % 30) }.joined(separator: " ")
                let sdp = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF \(formats)\r\na=mid:0\r\n"
                var id = 1_000_000
                while run.running.load(ordering: .relaxed) {
                    id += 1
                    run.sent.add(client.send(id: Int64(id), "echo.start", ["sdp": .string(sdp)]), ordering: .relaxed)
                    usleep(20_000)
                }
            },
        ]
        say("majlis bench attacks: a live room of \(listenerCount) listeners, an arena of 20, \(seconds) s per spell, \(runs) runs, server pid \(server.pid)")
        var nextPhase = 0
        func p99(_ phaseId: Int) -> Double { SignalingBenchmark.percentile(latencies.withLock { $0[phaseId] ?? [] }, 0.99) }
        var rises: [String: [Double]] = [:]
        for round in 0..<runs {
            for attack in attacks {
                // A quiet spell, then the attack, each `seconds` long.
                nextPhase += 1
                let quiet = nextPhase
                phase.store(quiet, ordering: .relaxed)
                Thread.sleep(forTimeInterval: Double(seconds))
                nextPhase += 1
                let under = nextPhase
                let outputBefore = arenaBytes.load(ordering: .relaxed) + arenaClients.reduce(0) { $0 + $1.bytesReceived.load(ordering: .relaxed) }
                phase.store(under, ordering: .relaxed)
                let run = Run()
                let finished = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    attack.body(run, round)
                    finished.signal()
                }
                Thread.sleep(forTimeInterval: Double(seconds))
                run.running.store(false, ordering: .relaxed)
                finished.wait()
                nextPhase += 1
                phase.store(nextPhase, ordering: .relaxed)  // the tail after it is neither
                Thread.sleep(forTimeInterval: 0.3)
                let output = arenaBytes.load(ordering: .relaxed) + arenaClients.reduce(0) { $0 + $1.bytesReceived.load(ordering: .relaxed) } - outputBefore
                    + run.received.load(ordering: .relaxed)
                let sent = run.sent.load(ordering: .relaxed)
                let (calm, attacked) = (p99(quiet), p99(under))
                rises[attack.name, default: []].append(attacked - calm)
                say(String(format: "  %@ (run %d): live p99 %.2f ms quiet, %.2f ms under it (%+.2f); the attacker sent %.0f KB/s, the server sent %.0f KB/s for it (x%.1f)",
                           attack.name, round + 1, calm, attacked, attacked - calm, Double(sent) / 1000 / Double(seconds),
                           Double(output) / 1000 / Double(seconds), Double(output) / Double(max(sent, 1))))
                Thread.sleep(forTimeInterval: 1)
            }
        }
        alive.store(false, ordering: .relaxed)
        threads.wait()
        say("live room p99 under each attack minus its quiet spell before (median, and range, of \(runs) runs):")
        for attack in attacks {
            let values = (rises[attack.name] ?? []).sorted()
            say(String(format: "  %@: %+.2f ms (%+.2f to %+.2f)", attack.name, values[values.count / 2], values.first ?? 0, values.last ?? 0))
        }
        return 0
    }
}
