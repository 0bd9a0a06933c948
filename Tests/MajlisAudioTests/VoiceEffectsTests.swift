import Foundation
import MajlisAudio
import MajlisLab
import MajlisProtocol
import MajlisTestSupport
import Testing

/// Voice effects measured on what comes out: the pitch moves by the semitones set, the
/// equalizer's bands reach their gains, the reverb leaves a tail, and every preset makes sound
/// (the work on threads of its own: the async pool stays free for the tests that run servers).
@Suite struct VoiceEffectsTests {
    @Test(arguments: [-12.0, -7, -3, 2, 5, 12])
    func pitchMovesByTheSemitonesSet(semitones: Double) async throws {
        let measured = try await offPoolInPairs { try ToolboxTrial.pitchShift(semitones: semitones) }
        #expect(abs(measured - semitones) <= 0.2, "set \(semitones), measured \(measured)")
    }

    /// A voice that never stops comes out without a gap once it has started, whatever the
    /// shift: SoundTouch hands out blocks of its own size, and a frame must never wait for one.
    @Test(arguments: [-12.0, -5, -1, 4, 7, 12])
    func aShiftedVoiceNeverDropsOut(semitones: Double) async throws {
        let longestGap = try await offPoolInPairs { () throws -> Int in
            let shifter = try PitchShifter(semitones: semitones)
            var tone = ToneGenerator(frequency: 180, amplitude: 0.3)
            var output: [Float] = []
            for _ in 0..<150 {
                var frame = tone.next().map { Float($0) / 32_768 }
                shifter.process(&frame)
                output += frame
            }
            let started = try #require(output.firstIndex { $0 != 0 })
            var longest = 0
            var run = 0
            for sample in output[started...] {
                run = sample == 0 ? run + 1 : 0
                longest = max(longest, run)
            }
            return longest
        }
        #expect(longestGap < 8, "\(longestGap) silent samples in a row")
    }

    @Test func theEqualizerReachesEachBandsGain() async throws {
        for gains in [[12.0, 6, 0, -6, -12, -12, -6, 0, 6, 12], [-15, 15, -15, 15, -15, 15, -15, 15, -15, 15], Array(repeating: 9.0, count: 10)] {
            let measured = try await offPoolInPairs { try ToolboxTrial.equalizerBands(gains: gains) }
            for (band, (got, wanted)) in zip(measured, gains).enumerated() {
                #expect(abs(got - wanted) <= 1, "band \(Equalizer.frequencies[band]) Hz: set \(wanted) dB, measured \(got)")
            }
        }
    }

    /// What the room hears of the equalizer through Opus is what docs/sdk.md says: with the
    /// music profile every band to 8 kHz within 1 dB of the equalizer alone and the 16 kHz band
    /// at least half of it (Opus codes 15.6-20 kHz as one band, by its energy); with the speech
    /// profile 2 to 8 kHz within 1 dB, the lower bands within 3 dB, 16 kHz at least 40%.
    @Test func theRoomHearsTheEqualizerThroughOpusAsDocumented() async throws {
        let gains = (0..<10).map { $0 % 2 == 0 ? 9.0 : -9 }
        let alone = try await offPoolInPairs { try ToolboxTrial.equalizerBandsHeard(gains: gains, profile: nil) }
        for profile in [AudioProfile.music, .speech] {
            let heard = try await offPoolInPairs { try ToolboxTrial.equalizerBandsHeard(gains: gains, profile: profile) }
            for band in 0..<9 {
                let allowed = profile == .music || band >= 6 ? 1.0 : 3.0
                #expect(abs(heard[band] - alone[band]) <= allowed, "\(profile) \(Equalizer.frequencies[band]) Hz: \(heard[band]) dB of \(alone[band])")
            }
            #expect(heard[9] / alone[9] >= (profile == .music ? 0.5 : 0.4) && heard[9] / alone[9] <= 1.1, "\(profile) 16 kHz: \(heard[9]) dB of \(alone[9])")
        }
    }

    @Test func gainsOutsideTheRangeAreClamped() {
        let effect = VoiceEffect(pitch: 30, equalizer: [40, -40])
        #expect(effect.pitch == 12)
        #expect(effect.equalizer == [15, -15, 0, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test func theReverbLeavesATailAfterTheVoiceStops() async throws {
        let burst = SyntheticSound.harmonicTone(frequency: 200, seconds: 0.2) + [Int16](repeating: 0, count: AudioFormat.sampleRate)
        let dry = try await offPoolInPairs { try ToolboxTrial.applied(.none, to: burst) }
        let wet = try await offPoolInPairs { try ToolboxTrial.applied(VoiceEffect.Preset.hall.effect, to: burst) }
        let after = AudioFormat.sampleRate / 4..<AudioFormat.sampleRate / 2
        #expect(dry == burst)
        #expect(LevelMeter.dBov(Array(dry[after])) < -90)
        #expect(LevelMeter.dBov(Array(wet[after])) > -50, "the hall rings on: \(LevelMeter.dBov(Array(wet[after]))) dBov")
    }

    @Test(arguments: VoiceEffect.Preset.allCases)
    func everyPresetChangesTheVoiceAndKeepsItAudible(preset: VoiceEffect.Preset) async throws {
        let speech = try await offPoolInPairs { try SpeechSample.make("Welcome to the room.") }
        let output = try await offPoolInPairs { try ToolboxTrial.applied(preset.effect, to: speech) }
        #expect(output.count == speech.count / AudioFormat.frameSamples * AudioFormat.frameSamples)
        if preset == .none {
            #expect(output == Array(speech.prefix(output.count)))
        } else {
            #expect(output != Array(speech.prefix(output.count)))
            let level = LevelMeter.dBov(output)
            #expect(abs(level - LevelMeter.dBov(speech)) < 10, "\(preset): \(level) dBov against \(LevelMeter.dBov(speech))")
        }
    }
}
