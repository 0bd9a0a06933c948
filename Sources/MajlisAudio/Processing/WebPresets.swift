import Foundation
import MajlisProtocol

/// The voice effects' presets as the web app reads them (`Web/app/presets.js`), made from the
/// one definition (`VoiceEffect.Preset`) and the stages' own constants: the equalizer's filter
/// gains as `Equalizer` solves them, the reverb's model and how long each preset's tail rings.
/// `WebPresetsTests` fails while the file differs from `module()`, and writes it anew when asked.
public enum WebPresets {
    /// The sample rate the equalizer's filters are solved at and the tails measured at.
    static let sampleRate = Double(AudioFormat.sampleRate)

    /// The JavaScript module's text.
    public static func module() -> String {
        var lines = [
            "// Generated from VoiceEffect.Preset (Sources/MajlisProtocol/Media/VoiceEffect.swift) and the stages'",
            "// constants (Equalizer, Reverb) by WebPresets: do not edit. After changing a preset, write it again:",
            "//   MAJLIS_WRITE_WEB_PRESETS=1 swift test --filter WebPresetsTests",
            "",
            "// The equalizer: peaking filters of width `q` at `bands` (Hz); a preset's `eq` is the response",
            "// at each band (dB), `filters` the filter gains that make it (dB).",
            "export const equalizer = { q: \(number(Equalizer.q)), bands: \(list(Equalizer.frequencies)) };",
            "",
            "// The reverb (Schroeder-Moorer, as Freeverb): comb and all-pass delays in samples at 44.1 kHz, a",
            "// comb's feedback `feedback[0] + feedback[1] * roomSize` and damping `damping` times the room's, an",
            "// all-pass's `allPass`; what goes in is scaled by `input` and the tail out by `output`.",
            "export const reverbModel = {",
            "  combs: \(list(Reverb.combLengths.map(Double.init))), allPasses: \(list(Reverb.allPassLengths.map(Double.init))),",
            "  feedback: \(list([Reverb.feedback.base, Reverb.feedback.perRoomSize])), damping: \(number(Reverb.dampingScale)),",
            "  allPass: \(number(Double(Reverb.allPassFeedback))), input: \(number(Reverb.inputGain)), output: \(number(Reverb.outputGain)),",
            "};",
            "",
            "// The voice effects by name: pitch (semitones), equalizer, reverb (room size, damping, wet share,",
            "// and `tail`: seconds until its impulse response is 60 dB down) and a ring modulator (Hz).",
            "export const effects = {",
        ]
        for preset in VoiceEffect.Preset.allCases {
            lines.append("  \(preset.rawValue): \(entry(preset.effect)),")
        }
        lines.append("};")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func entry(_ effect: VoiceEffect) -> String {
        guard effect.isActive else { return "null" }
        var fields: [String] = []
        if effect.pitch != 0 { fields.append("pitch: \(number(effect.pitch))") }
        if effect.equalizer.contains(where: { $0 != 0 }) {
            fields.append("eq: \(list(effect.equalizer))")
            fields.append("filters: \(list(Equalizer.filterGains(for: effect.equalizer, sampleRate: sampleRate).map { ($0 * 100).rounded() / 100 }))")
        }
        if let reverb = effect.reverb {
            fields.append(
                "reverb: { roomSize: \(number(reverb.roomSize)), damping: \(number(reverb.damping)), wet: \(number(reverb.wet)), tail: \(number(tail(reverb))) }")
        }
        if let ring = effect.ringModulation { fields.append("ring: \(number(ring))") }
        return "{ " + fields.joined(separator: ", ") + " }"
    }

    /// Seconds until the reverb's tail (its wet path's answer to an impulse) stays 60 dB under
    /// its peak, to the hundredth: measured on `Reverb` itself, in 10 ms windows.
    static func tail(_ settings: ReverbSettings) -> Double {
        var reverb = Reverb(ReverbSettings(roomSize: settings.roomSize, damping: settings.damping, wet: 1), sampleRate: Int(sampleRate))
        let window = Int(sampleRate / 100)
        var peaks: [Float] = []
        var first = true
        // Twenty seconds bound the longest room (a size of 1 rings about ten).
        for _ in 0..<2_000 {
            var samples = [Float](repeating: 0, count: window)
            if first { samples[0] = 1 }
            reverb.process(&samples)
            // The dry half of the impulse is not the room's.
            if first { samples[0] -= 0.5 }
            first = false
            peaks.append(samples.reduce(0) { max($0, abs($1)) })
        }
        let loudest = peaks.max() ?? 0
        let last = peaks.lastIndex { $0 >= loudest / 1_000 } ?? 0
        return Double(last + 1) / 100
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    private static func list(_ values: [Double]) -> String { "[" + values.map(number).joined(separator: ", ") + "]" }
}
