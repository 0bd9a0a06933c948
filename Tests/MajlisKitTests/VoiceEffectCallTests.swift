import MajlisAudio
import MajlisKit
import MajlisLab
import MajlisProtocol
import MajlisTestSupport
import Testing

/// The voice pipeline in a real call: what the speaker's app asks of `VoiceRoom` changes what the
/// listener hears.
@Suite(.serialized) struct VoiceEffectCallTests {
    @Test func aPitchEffectSetDuringTheCallIsHeardByTheListener() async throws {
        try await RealTimeGate.exclusively {
            let server = try LabServer()
            defer { server.stop() }
            let sink = RecordingSink()
            let call = try await LabCall(server: server, source: ToneSource(frequency: 300), sink: sink)
            func strongest() -> Double {
                let heard = sink.recorded.suffix(12 * AudioFormat.frameSamples)
                guard heard.count == 12 * AudioFormat.frameSamples, LevelMeter.dBov(Array(heard)) > -40 else { return 0 }
                return ToneDetector.strongest(of: [300, 600], in: Array(heard)) ?? 0
            }
            #expect(await eventually { strongest() == 300 }, "the voice as it is")
            await call.speaker.setVoiceEffect(VoiceEffect(pitch: 12))
            #expect(await eventually { strongest() == 600 }, "an octave up")
            await call.speaker.setVoiceEffect(.none)
            #expect(await eventually { strongest() == 300 }, "as it was again")
            await call.end()
        }
    }
}
