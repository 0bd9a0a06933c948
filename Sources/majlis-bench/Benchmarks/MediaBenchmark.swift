import Foundation
import MajlisCommandLine
import MajlisKit
import MajlisLab
import MajlisProtocol
import MajlisTransport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `majlis bench media`: K speakers and N listeners on a real `majlis serve`, SRTP on; prints
/// forwarded packets per second of server CPU time and the latency a packet sees through the
/// server (send to receive, on loopback).
enum MediaBenchmark {
    static let help = """
        usage: majlis bench media [--speakers K] [--listeners N] [--webrtc-listeners W] [--seconds S] [--turns T]
        Starts `majlis serve`, seats K speakers (default 4) and joins N native listeners (default 100) and W
        WebRTC listeners (default 0; ICE-lite, DTLS-SRTP, a receive track per seat, as a browser); each speaker
        sends one 100-byte SRTP packet every 20 ms for S seconds (default 30), and each native listener sends
        Majlis an RTCP receiver report every second, as clients do. Prints packets forwarded per
        second of server CPU time and the send-to-receive latency p50/p99 through the server. The same load
        also runs through a bare forwarder (the same SRTP work, nothing else), the two taking T turns each
        (default 15, alternating, S/T seconds a turn), and Majlis's rate is printed as a fraction of the bare
        one's, with both forwarders' own receive-to-send time per copy: yardsticks measured in the same run,
        on the same machine. First of all it times a 300 µs piece of arithmetic (about one packet's fan-out) on the
        idle machine, on a busy thread and right after a 1 ms sleep: the tail the machine itself adds.
        """

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        let speakerCount = try args.int("speakers", default: 4, range: 1...8)
        let listenerCount = try args.int("listeners", default: 100, range: 0...2000)
        let webrtcCount = try args.int("webrtc-listeners", default: 0, range: 0...2000)
        // 30 s in 15 turns: on a shared virtual machine one 2 s turn's ratio spreads from 0.6 to
        // 1.3 (the host stalls whichever thread it stalls, and its CPU clock counts the stall), so
        // a run needs many turns for its ratio to say something about the servers.
        let seconds = try args.int("seconds", default: 30, range: 1...600)
        let turns = try args.int("turns", default: 15, range: 1...60)
        guard seconds * 1_000 / turns >= 1_500 else { throw Arguments.Failure(description: "--seconds / --turns must leave each turn 1.5 s or more") }
        try args.rejectPositional("bench media")
        raiseFileLimit()
        say(HostNoise.measure().summary)
        let server = try ServerProcess()
        defer { server.stop() }

        // Everyone joins, and speakers take seats, over connections that share one client
        // thread (as the signaling benchmark's crowd does): a thread per member would make each
        // `speaker.levels` the server sends wake one up, on the server's account, which the
        // phones of a real room do not cost it.
        let url = server.url
        let signaling = try WebSocketClient()
        defer { signaling.stop() }
        var connections: [BenchClient] = []
        var members: [(RawMediaClient, Bool)] = []
        for index in 0..<(speakerCount + listenerCount) {
            let speaker = index < speakerCount
            let user = speaker ? "s\(index)" : "l\(index)"
            let client = BenchClient(user: user, token: ServerProcess.token(user))
            client.connection = try signaling.connect(url: url, delegate: client)
            connections.append(client)
            try client.waitUntilSignedIn()
            let joined = try client.request(.join(create: RoomSettings()), room: "bench")
            if speaker { _ = try client.call(.takeSeat(index: index), room: "bench") }
            guard let settings = MediaSettings(joined["media"]) else { throw Arguments.Failure(description: "the join answer had no media settings") }
            members.append((try RawMediaClient(settings: settings, receiveTimeoutMilliseconds: 200), speaker))
        }
        defer { withExtendedLifetime(connections) {} }
        for (member, _) in members where !member.bind() { throw Arguments.Failure(description: "a media binding got no answer") }
        let browsers = try runBlocking { () async throws -> [WebRTCClient] in
            var result: [WebRTCClient] = []
            for index in 0..<webrtcCount {
                let client = LiveSignalingClient(url: url, token: ServerProcess.token("w\(index)"))
                _ = try await client.connect()
                _ = try await client.request("room.join", ["room": "bench"])
                let browser = try WebRTCClient(receiveTimeoutMilliseconds: 200)
                let answer = try await client.request("webrtc.offer", ["room": "bench", "sdp": .string(browser.offer(seats: 8))])
                guard let sdp = answer["sdp"]?.stringValue else { throw Arguments.Failure(description: "webrtc.offer had no answer") }
                try browser.connect(answer: sdp)
                result.append(browser)
            }
            return result
        }
        let speakers = members.filter(\.1).map(\.0)
        let receivers: [any MediaReceiver] = members.map(\.0) + browsers
        say("majlis bench media: \(speakerCount) speakers, \(listenerCount) native and \(webrtcCount) WebRTC listeners, \(seconds) s, server pid \(server.pid)")

        // Two threads poll every member's socket without blocking, every millisecond. (A thread
        // blocked on each socket would make every forwarded packet wake one on the server's
        // account: on loopback the sender's CPU does the receiver's wake-up.)
        let running = Atomic<Bool>(true)
        // Latencies of what arrived while Majlis forwarded (phase 0) and the bare forwarder (1).
        let phase = Atomic<Int>(0)
        let collected = Mutex<[[Double]]>([[], []])
        let done = DispatchGroup()
        let halves = [receivers.enumerated().filter { $0.offset % 2 == 0 }.map(\.element),
                      receivers.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)]
        let speakerSSRCs = Set(members.filter(\.1).map(\.0.ssrc))
        for half in halves {
            done.enter()
            Thread.detachNewThread {
                yieldToServer()
                var local: [[Double]] = [[], []]
                // The newest sequence number each member heard from each speaker, for its reports.
                var newest = [[UInt32: UInt16]](repeating: [:], count: half.count)
                var nextReport = now() + 1_000_000_000
                while running.load(ordering: .relaxed) {
                    for (index, member) in half.enumerated() {
                        while let packet = try? member.receive(wait: false) {
                            let arrived = now()
                            newest[index][packet.ssrc] = packet.sequenceNumber
                            guard packet.payload.count >= 8 else { continue }
                            let sent = packet.payload.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                            local[phase.load(ordering: .relaxed)].append(Double(arrived &- sent) / 1e6)
                        }
                    }
                    if now() >= nextReport {
                        nextReport += 1_000_000_000
                        // Listeners only: a speaker's SRTP context is its sending thread's.
                        for (index, member) in half.enumerated() {
                            guard let native = member as? RawMediaClient, !speakerSSRCs.contains(native.ssrc) else { continue }
                            let blocks = newest[index].map {
                                RTCPReportBlock(ssrc: $0.key, fractionLost: 0, cumulativeLost: 0, highestSequence: UInt32($0.value), jitter: 0)
                            }
                            try? native.sendControl([.receiverReport(ssrc: native.ssrc, reports: blocks)])
                        }
                    }
                    usleep(1_000)
                }
                collected.withLock { $0 = [$0[0] + local[0], $0[1] + local[1]] }
                done.leave()
            }
        }
        // Made now, so that its thread runs at the server's priority, not the load's.
        let bare = try BareForwarder(members: members.map { (member, _) in (member.ssrc, UDPAddress(host: "127.0.0.1", port: member.socket.port)!, member.key) })
        yieldToServer()
        /// Every speaker sends one stamped packet every 20 ms for `milliseconds`, then waits for
        /// the last copies to arrive; returns the packets each speaker sent.
        func drive(milliseconds: Int) -> Int {
            let start = now()
            var rounds = 0
            var next = start
            while now() - start < UInt64(milliseconds) * 1_000_000 {
                next += 20_000_000
                rounds += 1
                for speaker in speakers {
                    var payload = [UInt8](repeating: 0xAB, count: 100)
                    let stamp = now()
                    for byte in 0..<8 { payload[byte] = UInt8(stamp >> (56 - 8 * UInt64(byte)) & 0xFF) }
                    try? speaker.send(payload)
                }
                let wait = Int64(next) - Int64(now())
                if wait > 0 { usleep(UInt32(wait / 1000)) }
            }
            usleep(300_000)
            return rounds
        }
        // The load alternates between Majlis and the bare forwarder (native receivers only), so
        // that a slow spell of the shared machine falls on both, not on one. Each forwarder's CPU
        // is counted over its own turns only. (A turn is longer than a second: the gap it leaves
        // in each stream is wider than any the router asks to have sent again.)
        let turn = seconds * 1_000 / turns
        var rounds = 0
        var bareRounds = 0
        var cpu = 0.0
        var bareCPU = 0.0
        var turnRatios: [Double] = []
        let majlisAddresses = speakers.map(\.server)
        for _ in 0..<turns {
            phase.store(0, ordering: .relaxed)
            for (speaker, address) in zip(speakers, majlisAddresses) { speaker.server = address }
            let cpuBefore = server.cpuSeconds()
            let sentHere = drive(milliseconds: turn)
            let cpuHere = server.cpuSeconds() - cpuBefore
            phase.store(1, ordering: .relaxed)
            for speaker in speakers { speaker.server = bare.address }
            let bareBefore = bare.cpuSeconds
            let bareSentHere = drive(milliseconds: turn)
            let bareHere = bare.cpuSeconds - bareBefore
            rounds += sentHere
            bareRounds += bareSentHere
            cpu += cpuHere
            bareCPU += bareHere
            // Copies per CPU-second of each, as sent (the receivers' count is the whole run's).
            turnRatios.append((Double(sentHere) / max(cpuHere, 0.001)) / max(Double(bareSentHere) / max(bareHere, 0.001), 1e-9))
        }
        let (_, _, bareLatency) = bare.stop()
        running.store(false, ordering: .relaxed)
        done.wait()
        let (latencies, bareReceived) = collected.withLock { ($0[0], $0[1].count) }
        let bareExpected = bareRounds * speakerCount * (speakerCount - 1 + listenerCount)
        let sent = rounds * speakerCount
        let expected = sent * (speakerCount - 1 + listenerCount + webrtcCount)
        say(String(format: "forwarded %d of %d expected packets (%.2f%% lost) in %d s: %.0f packets/s", latencies.count, expected,
                   100 * (1 - Double(latencies.count) / Double(max(1, expected))), seconds, Double(latencies.count) / Double(seconds)))
        say(String(format: "server CPU %.2f s: %.0f forwarded packets per CPU-second (SRTP in and out)", cpu, Double(latencies.count) / max(cpu, 0.001)))
        say(String(format: "send to receive (loopback, receivers polling every 1 ms): p50 %.3f ms, p99 %.3f ms, max %.3f ms",
                   SignalingBenchmark.percentile(latencies, 0.5), SignalingBenchmark.percentile(latencies, 0.99), latencies.max() ?? 0))
        let majlisRate = Double(latencies.count) / max(cpu, 0.001)
        let bareRate = Double(bareReceived) / max(bareCPU, 0.001)
        say(String(format: "bare forwarder (same load and SRTP; no rooms, rights, reports or repair; native receivers only): %d of %d received, CPU %.2f s: %.0f forwarded packets per CPU-second",
                   bareReceived, bareExpected, bareCPU, bareRate))
        say(String(format: "majlis / bare forwarder: %.2f (%d turns each, alternating; per turn %.2f to %.2f)", majlisRate / max(bareRate, 1), turns,
                   turnRatios.min() ?? 0, turnRatios.max() ?? 0))
        if let media = server.health()?["media"] {
            say(String(format: "server-added latency (receive to send of each copy, measured in the server): p50 %.3f ms, p99 %.3f ms, max %.3f ms",
                       Double(media["forwardLatencyP50"]?.intValue ?? 0) / 1000, Double(media["forwardLatencyP99"]?.intValue ?? 0) / 1000,
                       Double(media["forwardLatencyMax"]?.intValue ?? 0) / 1000) + (media["realtime"]?.boolValue == true ? " (forwarding thread real-time)" : " (forwarding thread ordinary)"))
        }
        say(String(format: "bare forwarder's own receive to send of each copy (the same measure): p50 %.3f ms, p99 %.3f ms, max %.3f ms",
                   Double(bareLatency.percentile(0.5)) / 1000, Double(bareLatency.percentile(0.99)) / 1000, Double(bareLatency.maximum) / 1000))
        return 0
    }

    /// Lowers the calling thread's priority (nice 10), so the load this benchmark makes on the
    /// two shared cores does not preempt the server it measures.
    static func yieldToServer() {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
    }
}
