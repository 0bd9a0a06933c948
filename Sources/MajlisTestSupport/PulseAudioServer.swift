import Foundation

/// A private PulseAudio daemon with two null sinks and no sound card: `speaker` (what a client
/// plays; recorded from `speaker.monitor`) and `microphone` (what a test plays; a client records
/// `microphone.monitor` as its microphone). Clients reach it through `environment`.
public final class PulseAudioServer: Sendable {
    public static var available: Bool {
        ["/usr/bin/pulseaudio", "/usr/bin/parec", "/usr/bin/paplay"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Its own runtime directory: the socket lives there, so nothing else on the machine is touched.
    public let runtime: String

    public init() throws {
        runtime = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-pulse-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let status = try ChildProcess.run(
            [
                "/usr/bin/pulseaudio", "--daemonize=yes", "--exit-idle-time=-1", "-n", "--use-pid-file=yes",
                "--load=module-null-sink sink_name=speaker rate=48000 channels=1",
                "--load=module-null-sink sink_name=microphone rate=48000 channels=1",
                "--load=module-native-protocol-unix",
            ], environment: ["XDG_RUNTIME_DIR": runtime, "HOME": runtime])
        guard status == 0, FileManager.default.fileExists(atPath: "\(runtime)/pulse/native") else {
            throw TestClient.Timeout(description: "pulseaudio did not start (exit \(status))")
        }
    }

    /// What a client needs to use this server: the speaker sink and the microphone's monitor.
    public var environment: [String: String] {
        ["XDG_RUNTIME_DIR": runtime, "HOME": runtime, "PULSE_SINK": "speaker", "PULSE_SOURCE": "microphone.monitor"]
    }

    /// The environment as shell assignments, for a command line.
    public var shellAssignments: String { environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }

    /// Records `seconds` of what clients play into the speaker, as a 48 kHz mono WAV at `path`.
    public func recordSpeaker(seconds: Int, to path: String) throws {
        try ChildProcess.run(
            ["/usr/bin/timeout", "\(seconds)", "/usr/bin/parec", "-d", "speaker.monitor", "--rate=48000", "--channels=1", "--format=s16le", "--file-format=wav", path],
            environment: environment)
    }

    /// Plays a WAV file into the microphone (returns when it has been played).
    public func playIntoMicrophone(_ path: String) throws {
        try ChildProcess.run(["/usr/bin/paplay", "-d", "microphone", path], environment: environment)
    }

    public func stop() {
        _ = try? ChildProcess.run(["/usr/bin/pulseaudio", "--kill"], environment: environment)
        try? FileManager.default.removeItem(atPath: runtime)
    }
}
