import MajlisProtocol

/// What happens to sound between the devices and the network, 20 ms frames of 48 kHz (mono; what
/// is sent is stereo with `sendChannels` 2, what is played stereo when asked).
/// Going out: the microphone's voice processing (echo cancellation, noise suppression, gain),
/// then the voice effect, then the music and sound effects sent to the room (`send`). Coming in:
/// what is heard, with the music played here, which is also the echo canceller's reference, and
/// the user's own voice for in-ear monitoring (`play`). Not thread-safe: the media engine's
/// thread owns it; settings come in through `apply`, tracks through `add`.
public final class VoicePipeline {
    private var processor: VoiceProcessor?
    private let effects: VoiceEffects
    public private(set) var processing: VoiceProcessing
    /// Music and sound effects being played; this tick's share of them for the room and here.
    private var tracks: [MusicTrack] = []
    private var musicSent: [[Int16]] = []
    private var musicHere: [(frame: [Int16], channels: Int)] = []
    private var sendMixer = Mixer()
    private var playMixer = Mixer()
    /// In-ear monitoring: the volume of the user's own processed voice in what is played here
    /// (0: off), and this tick's voice.
    public var monitorVolume = 0
    private var monitored: [Int16]?
    /// The app's taps (`AudioTap`), by where they sit.
    public var taps: [AudioTapPoint: any AudioTap] = [:]
    /// The channels of what `send` returns: 2 sends the voice in both and stereo music as it is.
    public var sendChannels = 1

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

    /// Plays `track` (already started with `MusicTrack.play`) until it ends or is stopped.
    public func add(_ track: MusicTrack) {
        if !tracks.contains(where: { $0 === track }) { tracks.append(track) }
    }

    /// Tracks still playing (paused ones too).
    public var playing: [MusicTrack] { tracks }

    /// One tick's way out: the tracks move on by a frame (whether or not anything is sent), and
    /// the microphone's frame (nil: it is not heard now) is processed and gets the music sent to
    /// the room. Returns what to encode. A stereo microphone (`channels` 2: a recording) is sent
    /// as it is where what is sent is stereo (voice processing and effects are for one voice),
    /// and as one channel otherwise.
    public func send(_ microphone: [Int16]?, channels: Int = 1) -> [Int16]? {
        musicSent = []
        musicHere = []
        tracks.removeAll { !$0.isPlaying }
        for track in tracks {
            guard let frame = track.next() else { continue }
            if let sent = frame.send { musicSent.append(Channels.convert(sent, from: track.channels, to: sendChannels)) }
            musicHere.append((frame.local, track.channels))
        }
        guard var frame = microphone else {
            monitored = nil
            return nil
        }
        let voice: [Int16]
        if channels == 2 && sendChannels == 2 {
            taps[.recording]?.process(&frame, channels: 2)
            monitored = monitorVolume > 0 ? Channels.convert(Gain.apply(monitorVolume, to: frame), from: 2, to: 1) : nil
            voice = frame
        } else {
            frame = Channels.convert(frame, from: channels, to: 1)
            capture(&frame)
            taps[.recording]?.process(&frame, channels: 1)
            monitored = monitorVolume > 0 ? Gain.apply(monitorVolume, to: frame) : nil
            voice = Channels.convert(frame, from: 1, to: sendChannels)
        }
        var sent = musicSent.isEmpty ? voice : sendMixer.mix([voice] + musicSent)
        taps[.sent]?.process(&sent, channels: sendChannels)
        return sent
    }

    /// One tick's way in: what was heard, with the music played here (the echo canceller's
    /// reference is all of that), then the monitored voice. Returns what to play. `heard` is mono,
    /// or interleaved stereo with `channels` 2 (spatial sound: the mono parts go to both ears).
    public func play(_ heard: [Int16], channels: Int = 1) -> [Int16] {
        var heard = heard
        taps[.mix]?.process(&heard, channels: channels)
        let music = musicHere.map { Channels.convert($0.frame, from: $0.channels, to: channels) }
        let speaker = music.isEmpty ? heard : playMixer.mix([heard] + music)
        render(Channels.convert(speaker, from: channels, to: 1))
        var out = monitored.map { playMixer.mix([speaker, Channels.convert($0, from: 1, to: channels)]) } ?? speaker
        taps[.playout]?.process(&out, channels: channels)
        return out
    }
}
