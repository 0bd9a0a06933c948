import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program and waits for it, spawned directly (posix_spawn and waitpid): it inherits no
/// descriptor but its standard three (a daemon it starts, tmux's server or pulseaudio, would
/// otherwise hold open for ever whatever another thread had open at that moment: the write end
/// of another test's pipe, or the socket by which Foundation learns that its `Process` ended, so
/// that one never ends), children start with no signal blocked, and Foundation's
/// `Process.waitUntilExit` is not used (`Process.waitForExit`).
public enum ChildProcess {
    /// Runs `argv` (argv[0] a full path) with standard input from /dev/null, standard output to
    /// `output` (or /dev/null) and standard error to /dev/null; returns the exit status.
    @discardableResult
    public static func run(_ argv: [String], environment: [String: String] = [:], output: String? = nil) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        _ = closeFrom(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var variables = ProcessInfo.processInfo.environment
        for (name, value) in environment { variables[name] = value }
        var cArguments = argv.map { strdup($0) } + [nil]
        var cEnvironment = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, &cArguments, &cEnvironment)
        guard spawned == 0 else { throw TestClient.Timeout(description: "cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}

/// glibc's (2.34 and later) `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc does not declare: the
/// child closes every descriptor from `lowest` up, at once, as it starts.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func closeFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) -> Int32
