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
