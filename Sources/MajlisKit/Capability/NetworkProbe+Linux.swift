#if os(Linux)
import Foundation
import MajlisProtocol
import MajlisTransport

/// The last-mile probe (docs/protocol.md section 15), before joining: the uplink's and
/// downlink's available bandwidth (up to the rates the app expects to use), loss and jitter,
/// the round trip, and a grade, in about seven seconds. `ProbeClientCore` does the work; this
/// hosts it on a UDP socket and a thread of its own for the probe's length.
public enum NetworkProbe {
    /// Probes the path to the server `signaling` is connected to; `up` and `down` are the rates
    /// to check for, bits per second (64 kb/s to 10 Mb/s).
    public static func run(signaling: any SignalingClient, up: Int = 500_000, down: Int = 500_000) async throws(MajlisError) -> ProbeReport {
        let answer = try await signaling.request("probe.start", ["up": .int(Int64(up)), "down": .int(Int64(down))])
        guard let settings = MediaSettings(answer["media"]) else { throw MajlisError.misuse("the server's probe answer has no usable media settings") }
        let socket: UDPSocket
        do {
            socket = try UDPSocket(host: "0.0.0.0", port: 0, receiveTimeoutMilliseconds: 5)
        } catch {
            throw MajlisError.misuse("cannot open a socket for the probe: \(error)")
        }
        defer { socket.close() }
        let rates = (up: answer["up"]?.intValue.map(Int.init) ?? up, down: answer["down"]?.intValue.map(Int.init) ?? down)
        let measured = await withCheckedContinuation { (done: CheckedContinuation<(ProbeFigures, Double?)?, Never>) in
            Thread.detachNewThread {
                ThreadName.set("majlis-probe")
                done.resume(returning: drive(settings, up: rates.up, down: rates.down, socket: socket))
            }
        }
        guard let measured else { throw MajlisError.misuse("the probe could not start (its SRTP key is unusable)") }
        let result = try? await signaling.request("probe.result", [:])
        _ = try? await signaling.request("probe.stop", [:])
        let uplink = result?["up"].flatMap { try? JSONValueDecoder().decode(ProbeFigures.self, from: $0) } ?? ProbeFigures(bandwidth: 0, loss: 1, jitter: 0, received: 0)
        return ProbeReport(uplink: uplink, downlink: measured.0, roundTrip: measured.1)
    }

    /// The probe's thread: a tick every 2 ms, and between ticks what arrives; ten seconds at most.
    /// Returns the downlink's figures and the round trip.
    private static func drive(_ settings: MediaSettings, up: Int, down: Int, socket: UDPSocket) -> (ProbeFigures, Double?)? {
        guard let core = try? ProbeClientCore(settings: settings, up: up, down: down) else { return nil }
        var buffer = [UInt8](repeating: 0, count: 2048)
        let start = MonotonicClock.milliseconds()
        func send(_ datagrams: [[UInt8]]) {
            for bytes in datagrams { socket.send(bytes, to: core.settings.server) }
        }
        while MonotonicClock.milliseconds() - start < 10_000 {
            let now = MonotonicClock.milliseconds()
            if core.isFinished(now: now) { break }
            send(core.tick(now: now))
            guard socket.waitReadable(milliseconds: 2) else { continue }
            while let (length, _) = socket.receive(into: &buffer, wait: false) {
                send(core.receive(Array(buffer.prefix(length)), now: MonotonicClock.milliseconds()))
            }
        }
        return (core.downlinkFigures, core.roundTrip)
    }
}
#endif
