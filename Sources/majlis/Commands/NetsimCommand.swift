import Dispatch
import Foundation
import MajlisCommandLine
import MajlisTransport

/// `majlis netsim`: a UDP relay that impairs traffic like a weak network.
enum NetsimCommand {
    static let help = """
        usage: majlis netsim --listen HOST:PORT --upstream HOST:PORT [--loss P] [--burst MEAN] [--delay MS]
                             [--jitter MS] [--reorder] [--seed N] [--rate KBPS [--queue MS]]
        Relays UDP between clients and a server (point clients at --listen, e.g. with majlis serve
        --media-advertise). Each client flow and direction loses P (0..1) of its packets in bursts of MEAN
        on average (Gilbert-Elliott; 1 = random loss), and is delayed MS +- jitter milliseconds, in order
        unless --reorder. --rate puts a bottleneck in each direction of each flow: KBPS kilobits per second
        counting IPv4 and UDP headers, with a drop-tail queue holding --queue milliseconds of packets (default
        300; a packet that would wait longer is dropped), as on a crowded cell. --seed makes a run repeatable.
        Runs until Ctrl-C.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments, switches: ["reorder"])
        if args.wantsHelp {
            say(help)
            return 0
        }
        guard let listen = args.string("listen"), let upstream = args.string("upstream") else {
            throw Arguments.Failure(description: "--listen and --upstream are required (see majlis netsim --help)")
        }
        func number(_ name: String, _ fallback: Double, _ range: ClosedRange<Double>) throws -> Double {
            guard let text = args.string(name) else { return fallback }
            guard let value = Double(text), range.contains(value) else {
                throw Arguments.Failure(description: "--\(name) must be a number in \(range.lowerBound)...\(range.upperBound)")
            }
            return value
        }
        let settings = NetworkSimulator.Settings(
            loss: try number("loss", 0, 0...1), meanBurst: try number("burst", 1, 1...1000), delay: try number("delay", 0, 0...10_000),
            jitter: try number("jitter", 0, 0...10_000), reorder: args.flag("reorder"), seed: UInt64(try args.int("seed", default: 1)),
            rate: args.string("rate") == nil ? nil : try number("rate", 0, 1...10_000_000) * 1000, queue: try number("queue", 300, 1...60_000))
        try args.rejectPositional("netsim")
        let (host, port) = try Arguments.hostPort(listen, flag: "listen")
        let (upHost, upPort) = try Arguments.hostPort(upstream, flag: "upstream")
        guard let server = UDPAddress(host: upHost, port: upPort) else { throw Arguments.Failure(description: "--upstream must be an IPv4 HOST:PORT") }
        let simulator = try NetworkSimulator(host: host, port: port, upstream: server, settings: settings)
        say("majlis netsim: relaying \(host):\(simulator.listener.port) -> \(server)")
        let done = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { done.signal() }
            source.resume()
            sources.append(source)
        }
        done.wait()
        simulator.stop()
        let counts = simulator.counted
        say(
            "majlis netsim: to server \(counts.up.sent) relayed, \(counts.up.lost) lost (\(counts.up.queueDrops) by the full queue); "
                + "to clients \(counts.down.sent) relayed, \(counts.down.lost) lost (\(counts.down.queueDrops) by the full queue)")
        _ = sources
        return 0
    }
}
