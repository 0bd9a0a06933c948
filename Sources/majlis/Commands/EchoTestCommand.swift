import Foundation
import MajlisAudio
import MajlisCommandLine
import MajlisKit
import MajlisProtocol

/// `majlis echo-test`: speak and hear yourself back through the server's media path.
enum EchoTestCommand {
    static let help = """
        usage: majlis echo-test --url ws://HOST:PORT/v1/signal --token TOKEN [--delay SECONDS] [--duration SECONDS]
                                [--mic FILE.wav] [--record FILE.wav] [--processing on|off] [--trust-cert FILE.pem]
        The echo test (docs/protocol.md section 15): what the microphone hears goes to the server and comes back
        --delay seconds later (2 to 10, default 3), played through the speaker, for --duration seconds (default
        20, at most 60). The sound server's microphone and speaker are used unless --mic (a WAV file) or
        --record (a WAV file of what came back) replace them; --processing as for majlis join.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        guard let url = args.string("url"), let token = args.string("token") else {
            throw Arguments.Failure(description: "--url and --token are required (see majlis echo-test --help)")
        }
        let delay = try args.int("delay", default: 3, range: 2...10)
        let duration = try args.int("duration", default: 20, range: 1...60)
        let processingText = args.string("processing")
        guard processingText == nil || ["on", "off"].contains(processingText) else { throw Arguments.Failure(description: "--processing must be on or off") }
        var options = JoinOptions(
            url: url, token: token, room: "echo-test", create: nil, seat: nil, request: false, say: nil, duration: duration, events: false,
            mic: args.string("mic"), record: args.string("record"), trustedCertificate: args.string("trust-cert"))
        options.processing = processingText.map { $0 == "on" ? .standard : .off }
        try args.rejectPositional("echo-test")
        let sound = SoundDevices.open(microphone: options.mic == nil, speaker: options.record == nil)
        defer { sound.close() }
        let recorder = RecordingSink()
        let media = try Bot.mediaEngine(options, recorder: recorder, sound: sound).engine
        if let description = sound.description(VoiceRoomPresenter(language: .english)) { say(description) }
        let signalingOptions = options.signalingOptions
        try runBlocking {
            let signaling = LiveSignalingClient(url: url, token: token, options: signalingOptions)
            _ = try await signaling.connect()
            let test = EchoTest(signaling: signaling, media: media)
            try await test.start(delay: .seconds(delay))
            say("speak now: you will hear yourself \(delay) s later, for \(duration) s")
            try await Task.sleep(for: .seconds(duration))
            await test.stop()
            await signaling.disconnect()
        }
        return Bot.save(recorder, to: options.record) ? 0 : 1
    }
}
