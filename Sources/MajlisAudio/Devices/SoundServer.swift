import Foundation

/// The desktop's sound server, reached through libpulse: PulseAudio, or PipeWire's PulseAudio
/// service. Found by its socket, so nothing is started when there is none.
public enum SoundServer {
    /// Where the server listens, or nil when this machine has none running for this user.
    public static func address(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let server = environment["PULSE_SERVER"], !server.isEmpty { return server }
        var sockets: [String] = []
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { sockets.append("\(runtime)/pulse/native") }
        sockets.append("/run/user/\(getuid())/pulse/native")
        sockets.append("/var/run/pulse/native")
        return sockets.first { FileManager.default.fileExists(atPath: $0) }.map { "unix:\($0)" }
    }
}
