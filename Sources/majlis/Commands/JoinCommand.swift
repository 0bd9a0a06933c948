import Dispatch
import Foundation
import MajlisCommandLine
import MajlisKit
import MajlisProtocol
import Synchronization

/// `majlis join`: a headless client (bot) on the SDK.
enum JoinCommand {
    static let help = """
        usage: majlis join --url ws://HOST:PORT/v1/signal --token TOKEN --room ROOM [--create] [--mode free|request]
                           [--seat N | --request] [--mic FILE.wav | --mic tone:HZ] [--record FILE.wav]
                           [--say TEXT] [--emoji SEAT:ITEM] [--duration SECONDS] [--events] [--tui] [--trust-cert FILE.pem]
                           [--log-file FILE]
                           [--processing on|off] [--noise-suppression LEVEL] [--effect PRESET] [--pitch SEMITONES]
                           [--eq G31,G62,...,G16k] [--reverb ROOM,DAMPING,WET]
                           [--music FILE [--music-local] [--music-loops N] [--music-volume SEND,LOCAL]] [--monitor VOLUME]
                           [--spatial] [--stereo] [--profile speech|music|stereo-music]
        Joins a room as a bot: --create creates it if missing (token needs the create grant); --seat N takes
        seat N, counted from 1 as every screen shows them (--events prints the protocol's index, from 0);
        --request asks to speak and waits for approval; --mic sends a WAV file (any rate, mono or stereo) or a
        tone, paced in real time, while seated (a file from its start once the media path is set up, so none of
        it is lost while it is); --record writes everything heard as a 48 kHz mono WAV; --say sends one chat
        message; --emoji sends emoji ITEM (of the server's current emoji packs) to seat SEAT, counted from 1; --events prints every event as one JSON object per line; --duration leaves after that many
        seconds (default: until Ctrl-C or end of input). Reconnects by itself if the server goes away and comes back.
        --tui shows the room in the terminal instead (in the language of LANG: English, Chinese or Arabic),
        playing it through the machine's sound server (PulseAudio or PipeWire) and sending its microphone,
        unless --mic or --record replace them.
        --processing turns echo cancellation, noise suppression (it engages where there is noise) and automatic
        gain on the microphone on or off: on by default for the sound server's microphone, off for --mic;
        --noise-suppression sets its level (low, moderate, high: the default, veryHigh, off). --effect changes
        the voice sent: deeper, brighter, child, elder, robot, ktv, studio, hall, none; --pitch (-12 to 12
        semitones), --eq (ten gains, -15 to 15 dB, at 31, 62, 125, 250, 500 Hz, 1, 2, 4, 8, 16 kHz; through
        Opus the room hears 16 kHz at about half its gain, and with the speech profile the bands under 2 kHz
        within 3 dB, the rest within 1) and --reverb
        (three numbers from 0 to 1) set or override its parts. --music plays a file (WAV, FLAC, Ogg Opus or
        Vorbis, MP3) into what the room hears while seated and here too (--music-local: here only), --music-loops
        times (default 1; 0 until the end of the run), at --music-volume percent for the room and here (0 to
        400, default 100,100); --monitor plays your own voice back to you at VOLUME percent (headphones).
        --spatial places each seat's speaker around you (on an arc in front, the first seat on your left), rendered
        for headphones from an HRTF: the speaker (or --record) becomes stereo. --stereo records in stereo (a
        speaker's stereo music is heard so; mono voices are in both channels). --profile music sends with Opus's
        general audio mode at 64 kb/s over the full band (to 20 kHz), for music; stereo-music the same in two
        channels at 96 kb/s (a stereo --music file is sent as it is); speech (the default) is tuned for voice.
        Over wss:// the server's certificate must be vouched for by the system's certificate authorities,
        or be the one in --trust-cert (a development server's self-signed certificate, as `majlis serve`
        prints it). The client keeps its own log (tokens taken out) and sends it when the app's support asks
        (`majlis admin logs`); --log-file keeps it in FILE across runs too, and says so at the start when the
        last run did not end.
        Exit status: 0 on a clean run; 1 with a one-line reason on any failure.
        """

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments, switches: ["create", "request", "events", "tui", "music-local", "spatial", "stereo"])
        if args.wantsHelp {
            say(help)
            return 0
        }
        let (urlGiven, tokenGiven, roomGiven) = (args.string("url"), args.string("token"), args.string("room"))
        guard let url = urlGiven, let token = tokenGiven, let room = roomGiven else {
            if let typo = args.misspelling(of: ["url", "token", "room"]) {
                throw Arguments.Failure(description: "unknown flag --\(typo.given) (did you mean --\(typo.meant)?)")
            }
            throw Arguments.Failure(description: "--url, --token and --room are required (see majlis join --help)")
        }
        let create = args.flag("create")
        let modeGiven = args.string("mode")
        let modeName = modeGiven ?? "free"
        let seatText = args.string("seat")
        let request = args.flag("request")
        let sayText = args.string("say")
        let emojiText = args.string("emoji")
        var emoji: (seat: Int, item: String)?
        if let emojiText {
            let parts = emojiText.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, let seat = Int(parts[0]), seat >= 1, !parts[1].isEmpty else {
                throw Arguments.Failure(description: "--emoji is SEAT:ITEM, the seat counted from 1 (--emoji 2:laugh)")
            }
            emoji = (seat - 1, parts[1])
        }
        let duration = try args.int("duration", default: -1, range: -1...10_000_000)
        let events = args.flag("events")
        let tui = args.flag("tui")
        let mic = args.string("mic")
        let record = args.string("record")
        let trustedCertificate = args.string("trust-cert")
        let logFile = args.string("log-file")
        let processingText = args.string("processing")
        let noiseText = args.string("noise-suppression")
        let effect = try Self.effect(preset: args.string("effect"), pitch: args.string("pitch"), equalizer: args.string("eq"), reverb: args.string("reverb"))
        let music = args.string("music")
        let musicLocal = args.flag("music-local")
        let musicLoops = try args.int("music-loops", default: 1, range: 0...1_000_000)
        let musicVolumes = try Self.volumes(args.string("music-volume"))
        let monitor = try args.int("monitor", default: 0, range: 0...400)
        let spatial = args.flag("spatial")
        let stereo = spatial || args.flag("stereo")
        guard let profile = AudioProfile(rawValue: args.string("profile") ?? "speech") else {
            throw Arguments.Failure(description: "--profile must be speech, music or stereo-music")
        }
        try args.rejectPositional("join")
        if let music {
            guard FileManager.default.isReadableFile(atPath: music) else { throw Arguments.Failure(description: "--music \(music): cannot read it") }
        } else if musicLocal || musicVolumes != nil {
            throw Arguments.Failure(description: "--music-local and --music-volume go with --music FILE")
        }
        var processing: VoiceProcessing?
        if processingText != nil || noiseText != nil {
            guard processingText == nil || ["on", "off"].contains(processingText) else {
                throw Arguments.Failure(description: "--processing must be on or off")
            }
            guard let level = VoiceProcessing.Level(rawValue: noiseText ?? VoiceProcessing.standard.noiseSuppression.rawValue) else {
                throw Arguments.Failure(description: "--noise-suppression must be low, moderate, high, veryHigh or off")
            }
            processing = processingText == "off" ? .off : VoiceProcessing(noiseSuppression: level)
        }
        guard let mode = RoomMode(rawValue: modeName) else { throw Arguments.Failure(description: "--mode must be free or request") }
        var seat: Int?
        if let seatText {
            guard let number = Int(seatText), number >= 1 else { throw Arguments.Failure(description: "--seat must be a seat number (1 is the first)") }
            seat = number - 1
        }
        if seat != nil && request { throw Arguments.Failure(description: "--seat and --request do not go together") }
        if modeGiven != nil && !create { throw Arguments.Failure(description: "--mode is the mode of a room --create makes; add --create") }
        if mic != nil && seat == nil && !request && !tui {
            throw Arguments.Failure(description: "--mic needs --seat N or --request: only a member on a seat is heard")
        }
        if !url.hasPrefix("ws://") && !url.hasPrefix("wss://") {
            throw Arguments.Failure(description: "--url must be the signaling address, ws://HOST:PORT/v1/signal (or wss://), not \(url)")
        }
        if URL(string: url)?.path.isEmpty != false {
            throw Arguments.Failure(description: "--url needs the path /v1/signal: \(url.hasSuffix("/") ? String(url.dropLast()) : url)/v1/signal")
        }
        if let trustedCertificate {
            guard url.hasPrefix("wss://") else { throw Arguments.Failure(description: "--trust-cert is for wss:// servers") }
            guard FileManager.default.isReadableFile(atPath: trustedCertificate) else {
                throw Arguments.Failure(description: "--trust-cert \(trustedCertificate): cannot read it")
            }
        }
        if let record {
            let directory = (record as NSString).deletingLastPathComponent
            guard FileManager.default.isWritableFile(atPath: directory.isEmpty ? "." : directory) else {
                throw Arguments.Failure(description: "--record \(record): cannot write in \(directory.isEmpty ? "." : directory)")
            }
        }
        guard Identifier.isValid(room) else { throw Arguments.Failure(description: "--room must be 1 to 64 characters of A-Z a-z 0-9 _ . @ -") }

        var options = JoinOptions(
            url: url, token: token, room: room, create: create ? RoomSettings(mode: mode) : nil, seat: seat, request: request,
            say: sayText, emoji: emoji, duration: duration >= 0 ? duration : nil, events: events, mic: mic, record: record, trustedCertificate: trustedCertificate,
            processing: processing, effect: effect,
            music: music.map { JoinOptions.Music(path: $0, loops: musicLoops, local: musicLocal, volumes: musicVolumes ?? (100, 100)) }, monitor: monitor,
            spatial: spatial, stereo: stereo, profile: profile)
        options.logFile = logFile
        if tui { return try TerminalUI.run(options) }
        if let note = Self.equalizerNote(effect.equalizer, profile: profile) { say(VoiceRoomPresenter(language: .english).text(note)) }
        return Bot(options: options).runBlocking()
    }
}

extension JoinCommand {
    /// `--music-volume SEND,LOCAL` (one number sets both).
    static func volumes(_ text: String?) throws -> (send: Int, local: Int)? {
        guard let text else { return nil }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard (1...2).contains(parts.count), parts.allSatisfy({ $0.map { (0...400).contains($0) } ?? false }) else {
            throw Arguments.Failure(description: "--music-volume must be SEND,LOCAL (or one number for both), each 0 to 400")
        }
        return (parts[0]!, parts.last!!)
    }

    /// What Opus at `profile` does not carry of `gains` (docs/sdk.md; measured by `majlis bench
    /// audio`), or nil when it carries them all within 1 dB.
    static func equalizerNote(_ gains: [Double], profile: AudioProfile) -> Strings.Key? {
        let low = profile == .speech && gains.prefix(6).contains { $0 != 0 }
        let top = gains.count == 10 && gains[9] != 0
        return low || top ? .equalizerThroughOpus(top: top, low: low) : nil
    }

    /// The voice effect of `--effect`, `--pitch`, `--eq` and `--reverb` (the parts given override
    /// the preset's).
    static func effect(preset: String?, pitch: String?, equalizer: String?, reverb: String?) throws -> VoiceEffect {
        var effect = VoiceEffect.none
        if let preset {
            guard let named = VoiceEffect.Preset(rawValue: preset.lowercased()) else {
                throw Arguments.Failure(description: "--effect must be one of \(VoiceEffect.Preset.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            effect = named.effect
        }
        if let pitch {
            guard let semitones = Double(pitch), (-12...12).contains(semitones) else {
                throw Arguments.Failure(description: "--pitch must be a number of semitones from -12 to 12")
            }
            effect.pitch = semitones
        }
        if let equalizer {
            let gains = equalizer.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard gains.count == 10, gains.allSatisfy({ $0.map { (-15...15).contains($0) } ?? false }) else {
                throw Arguments.Failure(description: "--eq must be ten gains from -15 to 15 dB, comma-separated (31 Hz to 16 kHz)")
            }
            effect.equalizer = gains.compactMap { $0 }
        }
        if let reverb {
            let parts = reverb.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 3, parts.allSatisfy({ $0.map { (0...1).contains($0) } ?? false }) else {
                throw Arguments.Failure(description: "--reverb must be ROOM,DAMPING,WET, each from 0 to 1")
            }
            effect.reverb = ReverbSettings(roomSize: parts[0]!, damping: parts[1]!, wet: parts[2]!)
        }
        return effect
    }
}

/// What `majlis join` was asked to do.
struct JoinOptions: Sendable {
    var url: String
    var token: String
    var room: String
    var create: RoomSettings?
    /// The seat's index (from 0; `--seat` counts from 1).
    var seat: Int?
    var request: Bool
    var say: String?
    /// `--emoji`: an item of the server's current emoji packs, sent to a seat (from 0) once joined.
    var emoji: (seat: Int, item: String)?
    var duration: Int?
    var events: Bool
    /// "tone:HZ" or a WAV file path.
    var mic: String?
    /// A WAV file to write what was heard to.
    var record: String?
    /// A PEM certificate to trust over wss besides the system's authorities.
    var trustedCertificate: String?
    /// The microphone's processing (nil: on for the sound server's microphone, off otherwise).
    var processing: VoiceProcessing?
    var effect: VoiceEffect = .none
    /// A music file to play (`--music`), and the in-ear monitoring volume (0: off).
    struct Music: Sendable {
        var path: String
        var loops: Int
        var local: Bool
        var volumes: (send: Int, local: Int)
    }
    var music: Music?
    var monitor = 0
    /// Spatial sound (`--spatial`): stereo out, each seat in its place.
    var spatial = false
    /// Stereo out (`--stereo`, or `--spatial`).
    var stereo = false
    /// The encoder's profile (`--profile`).
    var profile = AudioProfile.speech
    /// Where the client's log is kept across runs (`--log-file`); nil: in memory only.
    var logFile: String?

    var signalingOptions: LiveSignalingClient.Options {
        var options = LiveSignalingClient.Options()
        options.trustedCertificate = trustedCertificate
        return options
    }
}
