import MajlisProtocol

/// What happens to the microphone between the device and the encoder: voice processing (echo
/// cancellation, noise suppression, gain), then the voice effect; and what the speaker plays, as
/// the echo canceller's reference. 20 ms frames of 48 kHz mono. Not thread-safe: the media
/// engine's thread owns it; settings come in through `apply`.
public final class VoicePipeline {
    private var processor: VoiceProcessor?
    private let effects: VoiceEffects
    public private(set) var processing: VoiceProcessing

    public init(processing: VoiceProcessing = .off, effect: VoiceEffect = .none) throws(AudioError) {
        self.processing = .off
        effects = try VoiceEffects(effect)
        try apply(processing)
    }

    public var effect: VoiceEffect { effects.effect }

    /// Whether the noise suppressor is at work now (it engages where there is noise).
    public var isSuppressingNoise: Bool { processor?.isSuppressingNoise ?? false }

    /// Whether the last captured frame held voice (while processing runs).
    public var voiceDetected: Bool { processor?.voiceDetected ?? false }

    public func apply(_ processing: VoiceProcessing) throws(AudioError) {
        if !processing.isActive {
            processor = nil
        } else if let processor {
            try processor.apply(processing)
        } else {
            processor = try VoiceProcessor(settings: processing)
        }
        self.processing = processing
    }

    public func apply(_ effect: VoiceEffect) throws(AudioError) { try effects.apply(effect) }

    /// A frame of the microphone, in place: processed, then the effect.
    public func capture(_ frame: inout [Int16]) {
        processor?.capture(&frame)
        effects.process(&frame)
    }

    /// A frame about to be played (what the echo canceller must take out of the microphone).
    public func render(_ frame: [Int16]) {
        processor?.render(frame)
    }
}
