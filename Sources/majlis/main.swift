import Foundation
import MajlisCommandLine
import MajlisServer
import MajlisTransport

let usage = """
    usage: majlis <command> [flags]
    commands:
      serve    run the server (signaling, HTTP, store)
      token    print an access token
      admin    drive rooms through the server API (list, end, kick, mute-all, say, webhooks)
      join     join a room as a bot (or with a terminal UI: --tui)
      message  send, list, sync and follow conversations outside rooms
      probe    measure the network path to a server before joining
      echo-test  speak and hear yourself back through a server
      bench    run a benchmark (signaling, media, mouth-to-ear, quality, webhooks, cluster, audio, attacks, messaging)
      netsim   relay UDP through a simulated weak network
      backup   copy the store while the server runs
      migrate  move a data directory's store into PostgreSQL
    Every command has --help.
    """


// Start with no signal blocked, whatever the parent left blocked: SIGTERM, SIGINT, SIGHUP and
// SIGWINCH drive shutdown and redraws. The server blocks SIGTERM and SIGINT here, before any thread
// of its own starts, so every thread inherits the mask and one that arrives at any moment stays
// pending until its stopping thread takes it (`ServeCommand.StopSignals`).
let arguments = Array(CommandLine.arguments.dropFirst())
var startMask = sigset_t()
sigemptyset(&startMask)
if arguments.first == "serve" { ServeCommand.StopSignals.add(to: &startMask) }
sigprocmask(SIG_SETMASK, &startMask, nil)

guard let command = arguments.first else {
    FileHandle.standardError.write(Data("\(usage)\n".utf8))
    exit(2)
}
let rest = Array(arguments.dropFirst())
do {
    let status: Int32
    switch command {
    case "serve": status = try ServeCommand.run(rest)
    case "token": status = try TokenCommand.run(rest)
    case "admin": status = try AdminCommand.run(rest)
    case "join": status = try JoinCommand.run(rest)
    case "message": status = try MessageCommand.run(rest)
    case "probe": status = try ProbeCommand.run(rest)
    case "echo-test": status = try EchoTestCommand.run(rest)
    case "bench": status = BenchLauncher.run(rest)
    case "netsim": status = try NetsimCommand.run(rest)
    case "backup": status = try BackupCommand.run(rest)
    case "migrate": status = try MigrateCommand.run(rest)
    case "--help", "-h", "help":
        say(usage)
        status = 0
    case "--version", "version":
        say("majlis \(SignalingServer.version)")
        status = 0
    default:
        FileHandle.standardError.write(Data("majlis: unknown command '\(command)'\n\(usage)\n".utf8))
        status = 2
    }
    exit(status)
} catch {
    FileHandle.standardError.write(Data("majlis \(command): \(error)\n".utf8))
    exit(1)
}
