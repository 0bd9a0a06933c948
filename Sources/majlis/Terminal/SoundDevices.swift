import MajlisAudio
import MajlisKit

/// The machine's microphone and speaker for the terminal client, through the sound server;
/// each only when no flag replaces it (`--mic`, `--record`).
struct SoundDevices: Sendable {
    var microphone: PulseAudioMicrophone?
    var speaker: PulseAudioSpeaker?
    /// Whether the client wanted a device at all.
    var wanted: Bool
    /// Why there is none, when wanted.
    var problem: String?

    static let none = SoundDevices(wanted: false)

    /// The sound server's devices, as wanted (a stereo speaker for spatial sound).
    static func open(microphone wantsMicrophone: Bool, speaker wantsSpeaker: Bool, stereo: Bool = false) -> SoundDevices {
        guard wantsMicrophone || wantsSpeaker else { return .none }
        guard let server = SoundServer.address() else { return SoundDevices(wanted: true, problem: nil) }
        var devices = SoundDevices(wanted: true)
        do {
            if wantsSpeaker { devices.speaker = try PulseAudioSpeaker(server: server, channels: stereo ? 2 : 1) }
            if wantsMicrophone { devices.microphone = try PulseAudioMicrophone(server: server) }
        } catch {
            devices.close()
            return SoundDevices(wanted: true, problem: error.description)
        }
        return devices
    }

    /// The line the screen shows about sound, in the user's language (nil when flags replace both devices).
    func description(_ presenter: VoiceRoomPresenter) -> String? {
        guard wanted else { return nil }
        guard microphone != nil || speaker != nil else {
            return presenter.text(.noSound) + (problem.map { " (\($0))" } ?? "")
        }
        return presenter.text(.sound("PulseAudio"))
    }

    func close() {
        microphone?.close()
        speaker?.close()
    }
}
