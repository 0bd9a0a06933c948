import MajlisTransport

/// A pre-call test a member runs with the router instead of being in a room
/// (docs/protocol.md section 15).
enum PrecallTest {
    /// What it sends comes back to it `delay` ms later, under `echoSSRC`.
    case echo(EchoLoop)
    /// It sends a probe train up, the router one down; the router measures what came up.
    case probe(ProbeRun)

    /// How long a test may run, ms: then the router forgets it.
    static let lifetime = 60_000.0
}
