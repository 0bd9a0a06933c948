import MajlisKit
import MajlisProtocol
import Testing

@testable import majlis

/// `majlis join`'s voice effect flags: a preset, and parts that override it; bad values refused
/// with a reason.
@Suite struct JoinEffectTests {
    @Test func aPresetAndItsOverrides() throws {
        #expect(try JoinCommand.effect(preset: nil, pitch: nil, equalizer: nil, reverb: nil) == .none)
        #expect(try JoinCommand.effect(preset: "KTV", pitch: nil, equalizer: nil, reverb: nil) == VoiceEffect.Preset.ktv.effect)
        let effect = try JoinCommand.effect(preset: "child", pitch: "-3.5", equalizer: "1,2,3,4,5,6,7,8,9,10", reverb: "0.9,0.1,0.5")
        #expect(effect.pitch == -3.5)
        #expect(effect.equalizer == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
        #expect(effect.reverb == ReverbSettings(roomSize: 0.9, damping: 0.1, wet: 0.5))
    }

    /// What Opus does not carry of the equalizer is said where it matters.
    @Test func theEqualizerNoteSaysWhatTheCodecDoesNotCarry() {
        let flat = [Double](repeating: 0, count: 10)
        #expect(JoinCommand.equalizerNote(flat, profile: .speech) == nil)
        #expect(JoinCommand.equalizerNote([0, 0, 0, 0, 0, 0, 3, 3, 3, 0], profile: .speech) == nil)
        #expect(JoinCommand.equalizerNote([3, 0, 0, 0, 0, 0, 0, 0, 0, 0], profile: .music) == nil)
        #expect(JoinCommand.equalizerNote([0, 0, 0, 0, 0, 0, 0, 0, 0, -12], profile: .music) == .equalizerThroughOpus(top: true, low: false))
        #expect(JoinCommand.equalizerNote(VoiceEffect.Preset.deeper.effect.equalizer, profile: .speech) == .equalizerThroughOpus(top: false, low: true))
        let english = VoiceRoomPresenter(language: .english)
        #expect(english.text(.equalizerThroughOpus(top: true, low: false)) == "Equalizer: through Opus the room hears 16 kHz at about half its gain")
        #expect(english.text(.equalizerThroughOpus(top: true, low: true)).contains("half its gain and the bands under 2 kHz within 3 dB"))
    }

    @Test(arguments: [
        ("shout", nil, nil, nil, "--effect must be one of"), (nil, "13", nil, nil, "--pitch"), (nil, "up", nil, nil, "--pitch"),
        (nil, nil, "1,2,3", nil, "--eq"), (nil, nil, "1,2,3,4,5,6,7,8,9,16", nil, "--eq"), (nil, nil, nil, "0.5,0.5", "--reverb"),
        (nil, nil, nil, "0.5,0.5,2", "--reverb"),
    ] as [(String?, String?, String?, String?, String)])
    func badValuesAreRefusedWithAReason(preset: String?, pitch: String?, equalizer: String?, reverb: String?, reason: String) {
        #expect {
            _ = try JoinCommand.effect(preset: preset, pitch: pitch, equalizer: equalizer, reverb: reverb)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }
}
