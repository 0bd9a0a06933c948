import MajlisForwarding
import MajlisProtocol

/// What the pre-call tests (docs/protocol.md section 15) may cost the server, as a pure value:
/// tests are admitted or refused against caps per client address and server-wide, and a probe's
/// downlink bandwidth against a server-wide total, with a cool-down between one user's probes.
/// A test is counted from its start until it is stopped (its op, its connection's end, a test
/// of the same kind replacing it) or its lifetime has passed, whichever comes first. Times are
/// milliseconds, given by the caller. Tested in memory (`PrecallBudgetTests`) and against a real
/// server (`PrecallLimitTests`).
///
/// Why no grant: a client runs these before it may be in any room, to tell its user whether the
/// call will work; tokens for rooms that need no grant to listen need none for this either. The
/// caps hold what any one token or address can make the server send.
struct PrecallBudget: Sendable {
    enum Kind: String, Sendable { case echo, probe }

    struct Limits: Sendable {
        /// Tests one client address may run at once, of each kind: a household or office behind
        /// one address checks a few devices at a time; the web app and the SDK run one of each.
        var echoTestsPerAddress = 4
        var probesPerAddress = 2
        /// Echo tests on the server at once: each holds up to `EchoLoop`'s byte bound (its delay
        /// times Opus's top rate, 640 KB at 10 s), so 32 hold at most 20 MB.
        var echoTests = 32
        /// The probes' downlink trains running at once, summed (bits per second): 20 Mb/s is two
        /// probes at the top rate or forty at the clients' default (500 kb/s). A hundred probes
        /// at the top rate at once (247 MB sent) raised a live room's forwarding p99 from 1 ms
        /// to 50 ms on a 2-core machine.
        var probeBandwidth = 20_000_000
        /// Between two probes of one user (ms): a client checks again after a failure, not in a loop.
        var probeCoolDown: Int64 = 5_000
        /// How long a test counts at most (ms): the router forgets a test this long after it started.
        var lifetime = Int64(MediaRouterCore.precallLifetime)
    }

    private struct Running: Sendable {
        var kind: Kind
        var address: String
        var bitrate: Int
        var until: Int64
    }

    let limits: Limits
    /// Running tests by their key (a connection and kind): at most `echoTests` echo tests and, as
    /// every probe costs at least `ProbeSchedule.bitrates.lowerBound`, `probeBandwidth / 64,000`
    /// probes.
    private var running: [String: Running] = [:]
    /// Each user's last probe start, kept for the cool-down only: at most the probes admitted
    /// within the last `probeCoolDown`.
    private var lastProbe: [String: Int64] = [:]

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Admits `key`'s test of `kind` for `user` from `address` (replacing `key`'s running one), or
    /// says why not. `bitrate` is a probe's downlink rate (clamped as the probe will send it).
    mutating func admit(_ key: String, kind: Kind, user: String, address: String, bitrate: Int = 0, now: Int64) -> ProtocolError? {
        forget(before: now)
        let same = running.filter { $0.key != key && $0.value.kind == kind }.values
        switch kind {
        case .echo:
            if same.count(where: { $0.address == address }) >= limits.echoTestsPerAddress {
                return ProtocolError(.rateLimited, "echo.start: your address runs \(limits.echoTestsPerAddress) echo tests already; stop one first")
            }
            if same.count >= limits.echoTests {
                return ProtocolError(.rateLimited, "echo.start: the server runs as many echo tests as it takes (\(limits.echoTests)); try again in a minute")
            }
        case .probe:
            if let last = lastProbe[user], now - last < limits.probeCoolDown {
                let wait = (limits.probeCoolDown - (now - last) + 999) / 1_000
                return ProtocolError(.rateLimited, "probe.start: one probe every \(limits.probeCoolDown / 1_000) s per user; try again in \(wait) s")
            }
            if same.count(where: { $0.address == address }) >= limits.probesPerAddress {
                return ProtocolError(.rateLimited, "probe.start: your address runs \(limits.probesPerAddress) probes already; stop one first")
            }
            let used = same.reduce(0) { $0 + $1.bitrate }
            if used + bitrate > limits.probeBandwidth {
                return ProtocolError(
                    .rateLimited,
                    "probe.start: the server's probe bandwidth (\(limits.probeBandwidth / 1_000_000) Mb/s) is in use; try again in a few seconds, or ask for a lower down")
            }
            lastProbe[user] = now
        }
        running[key] = Running(kind: kind, address: address, bitrate: bitrate, until: now + limits.lifetime)
        return nil
    }

    /// `key`'s test stopped (harmless if none runs).
    mutating func end(_ key: String) {
        running[key] = nil
    }

    /// How many tests of `kind` count now.
    func count(_ kind: Kind) -> Int { running.values.count { $0.kind == kind } }

    private mutating func forget(before now: Int64) {
        running = running.filter { $0.value.until > now }
        lastProbe = lastProbe.filter { now - $0.value < limits.probeCoolDown }
    }
}
