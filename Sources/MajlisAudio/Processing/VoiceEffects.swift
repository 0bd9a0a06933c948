import Foundation
import MajlisProtocol

/// A `VoiceEffect` at work on 48 kHz mono frames: pitch, then the equalizer, the ring modulator
/// and the reverb. Not thread-safe: one pipeline owns it.
public final class VoiceEffects {
    public private(set) var effect: VoiceEffect
    private let sampleRate: Int
    private var shifter: PitchShifter?
    private var equalizer: Equalizer
    private var reverb: Reverb?
    private var phase = 0.0

    public init(_ effect: VoiceEffect = .none, sampleRate: Int = AudioFormat.sampleRate) throws(AudioError) {
        self.effect = .none
        self.sampleRate = sampleRate
        equalizer = Equalizer(sampleRate: sampleRate)
        try apply(effect)
    }

    /// Changes the effect from the next frame on (a reverb already ringing rings on; a pitch
    /// shifter started again starts silent for its latency).
    public func apply(_ effect: VoiceEffect) throws(AudioError) {
        if effect.pitch == 0 {
            shifter = nil
        } else if let shifter {
            shifter.set(semitones: effect.pitch)
        } else {
            shifter = try PitchShifter(semitones: effect.pitch, sampleRate: sampleRate)
        }
        if effect.equalizer != equalizer.gains { equalizer.set(effect.equalizer) }
        if let settings = effect.reverb {
            if reverb == nil { reverb = Reverb(settings, sampleRate: sampleRate) } else { reverb?.set(settings) }
        } else {
            reverb = nil
        }
        self.effect = effect
    }

    /// One frame through the effect, in place.
    public func process(_ frame: inout [Int16]) {
        guard effect.isActive else { return }
        var samples = frame.map { Float($0) / 32_768 }
        shifter?.process(&samples)
        equalizer.process(&samples)
        if let frequency = effect.ringModulation {
            let step = 2 * Double.pi * frequency / Double(sampleRate)
            for index in samples.indices {
                samples[index] *= Float(sin(phase))
                phase += step
            }
            phase = phase.truncatingRemainder(dividingBy: 2 * Double.pi)
        }
        reverb?.process(&samples)
        for index in frame.indices { frame[index] = Int16(max(-32_768, min(32_767, (samples[index] * 32_768).rounded()))) }
    }
}
