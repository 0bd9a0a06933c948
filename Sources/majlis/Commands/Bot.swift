import Dispatch
import Foundation
import MajlisAudio
import MajlisCommandLine
import MajlisKit
import MajlisProtocol
import Synchronization

/// The headless client behind `majlis join`.
final class Bot: Sendable {
    let options: JoinOptions
    private let outcome = Mutex<Int32?>(nil)
    /// Set once the room is joined; failures before that are reported by `run`.
    private let joined = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    /// Signalled once joining (and what the flags asked for first) succeeded or failed.
    private let settled = DispatchSemaphore(value: 0)

    init(options: JoinOptions) { self.options = options }

    /// Runs until the duration ends, a signal or end of input arrives, or something fails.
    func runBlocking() -> Int32 {
        let (signaling, logger, responder) = Self.signaling(options)
        defer { responder.stop() }
        let recorder = RecordingSink(channels: options.stereo ? 2 : 1)
        let media: any MediaEngine
        do {
            media = try Self.mediaEngine(options, recorder: recorder).engine
        } catch {
            complain("majlis join: \(error)")
            return 1
        }
        let room = VoiceRoom(roomId: options.room, signaling: signaling, media: media, logger: logger)
        let main = Task { await self.run(signaling: signaling, room: room) }
        var sources: [DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { self.finish(0) }
            source.resume()
            sources.append(source)
        }
        if options.duration == nil {
            // End of input ends the run (Ctrl-D, or a closed pipe), once joining has succeeded or
            // failed: a failure is reported even when input was empty from the start.
            Thread.detachNewThread {
                while readLine() != nil {}
                self.settled.wait()
                self.finish(0)
            }
        }
        done.wait()
        main.cancel()
        let status = outcome.withLock { $0 } ?? 0
        Self.wrapUp(room: room, media: media, signaling: signaling, leave: status == 0, patience: 3)
        _ = sources
        return Self.save(recorder, to: options.record) ? status : 1
    }

    /// Leaves the room politely (for at most `patience` seconds: the server may be gone), then
    /// stops the media engine and waits for its thread to end, however long leaving took: the
    /// process exits next, and exit runs the audio libraries' C++ destructors, which a voice
    /// thread still running would race (once, on a busy machine, a bot aborted at exit so). A
    /// thread stuck in a device for 10 s is left behind rather than hang the exit.
    static func wrapUp(room: VoiceRoom, media: any MediaEngine, signaling: LiveSignalingClient, leave: Bool, patience: Double) {
        let left = DispatchSemaphore(value: 0)
        Task {
            if leave { try? await room.leave() }
            left.signal()
        }
        _ = left.wait(timeout: .now() + patience)
        let stopped = DispatchSemaphore(value: 0)
        Task {
            await media.stop()
            stopped.signal()
        }
        _ = stopped.wait(timeout: .now() + 10)
        let closed = DispatchSemaphore(value: 0)
        Task {
            await signaling.disconnect()
            closed.signal()
        }
        _ = closed.wait(timeout: .now() + 1)
    }

    /// Writes what was heard to `path` (when asked); false, with a message, if it cannot.
    static func save(_ recorder: RecordingSink, to path: String?) -> Bool {
        guard let path else { return true }
        do {
            try recorder.write(to: path)
            return true
        } catch {
            complain("majlis join: \(error)")
            return false
        }
    }

    /// The live media engine when the client speaks or listens (flags first, then the sound
    /// server's devices), else none; and the music it plays (`--music`).
    /// The signaling client of a `majlis join`, with the log it and the room keep for the app's
    /// support to ask for (`majlis admin logs`; in `--log-file` across runs), answered by the
    /// responder (started; its `stop` closes the log). A run before that did not end is said.
    static func signaling(_ options: JoinOptions) -> (client: LiveSignalingClient, logger: Logger, responder: LogResponder) {
        let log = ClientLog(file: options.logFile)
        if let file = options.logFile, log.previousRunEnded == false {
            complain("majlis join: the last run with --log-file \(file) did not end (a crash or a kill); its log is kept there, and goes to the app's support when they ask for it")
        }
        let logger = log.logger(label: "majlis")
        let client = LiveSignalingClient(url: options.url, token: options.token, options: options.signalingOptions, logger: logger)
        let responder = LogResponder(signaling: client, transfer: HTTPMediaTransfer(signaling: client), log: log, logger: logger)
        responder.start()
        return (client, logger, responder)
    }

    static func mediaEngine(_ options: JoinOptions, recorder: RecordingSink, sound: SoundDevices = .none) throws -> (engine: any MediaEngine, music: MusicTrack?) {
        guard options.mic != nil || options.record != nil || options.music != nil || sound.microphone != nil || sound.speaker != nil else {
            return (NullMediaEngine(), nil)
        }
        let source: any AudioSource
        switch options.mic {
        case nil:
            source = sound.microphone ?? SilenceSource()
        case let mic? where mic.hasPrefix("tone:"):
            guard let frequency = Double(mic.dropFirst(5)), frequency > 0, frequency < 24_000 else {
                throw JoinCommand.Failure(description: "--mic tone:HZ needs a frequency between 0 and 24000")
            }
            source = ToneSource(frequency: frequency)
        case let path?:
            do {
                source = try FileSource(path: path, stereo: options.profile.channels == 2)
            } catch {
                throw JoinCommand.Failure(description: "--mic \(path): \(error)")
            }
        }
        var sink: any AudioSink = NullSink()
        if options.record != nil {
            sink = recorder
        } else if let speaker = sound.speaker {
            sink = speaker
        }
        let engine = try LiveMediaEngine(
            source: source, sink: sink, profile: options.profile, processing: processing(options, sound: sound), effect: options.effect)
        var played: MusicTrack?
        if let music = options.music {
            let track: MusicTrack
            do {
                track = try MusicTrack(path: music.path)
            } catch {
                throw JoinCommand.Failure(description: "--music \(music.path): \(error)")
            }
            track.setVolumes(send: music.volumes.send, local: music.volumes.local)
            engine.play(track, loops: music.loops, destination: music.local ? .local : .room)
            played = track
        }
        if options.monitor > 0 { engine.setInEarMonitoring(volume: options.monitor) }
        return (engine, played)
    }

    /// The microphone's processing: as asked, else on for the sound server's microphone (a
    /// microphone and a speaker in one room hear each other) and off for a file or a tone.
    static func processing(_ options: JoinOptions, sound: SoundDevices) -> VoiceProcessing {
        options.processing ?? (options.mic == nil && sound.microphone != nil ? .standard : .off)
    }

    /// Ends the run with `status` (the first call wins).
    func finish(_ status: Int32, _ message: String? = nil) {
        let first = outcome.withLock { outcome -> Bool in
            guard outcome == nil else { return false }
            outcome = status
            return true
        }
        guard first else { return }
        if let message { complain("majlis join: \(message)") }
        done.signal()
    }

    private func run(signaling: LiveSignalingClient, room: VoiceRoom) async {
        if options.spatial { await room.setSpatialSound(true) }
        var settledSignalled = false
        defer { if !settledSignalled { settled.signal() } }
        let stream = signaling.subscribe()
        if options.events {
            Task {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                for await event in stream {
                    if case .event(let frame) = event, let data = try? encoder.encode(frame) {
                        say(String(decoding: data, as: UTF8.self))
                    }
                }
            }
        }
        do {
            _ = try await signaling.connect()
        } catch {
            finish(1, describeConnect(error))
            return
        }
        let states = await room.states()
        Task { await self.watch(states) }
        do {
            try await room.join(create: options.create)
            joined.store(true, ordering: .relaxed)
            if let seat = options.seat { try await room.takeSeat(seat) }
            if options.request {
                try await room.requestSeat()
                complain("majlis join: asked to speak in \(options.room); waiting for the host to accept")
                settled.signal()
                settledSignalled = true
                guard await waitForSeat(room) else { return }
                if let seat = await room.state.mySeat { complain("majlis join: accepted, on seat \(seat + 1)") }
            }
            if let text = options.say { try await room.sendChat(text) }
            if let emoji = options.emoji {
                let catalogue = try await PackCatalogue.fetch(from: HTTPPackSource(signaling: signaling))
                guard let pack = catalogue.emojiPack(with: emoji.item) else {
                    finish(1, "no emoji \(emoji.item) in the server's packs (majlis admin packs lists them)")
                    return
                }
                try await room.sendEmoji(toSeat: emoji.seat, pack: pack.sha256, item: emoji.item)
            }
        } catch {
            finish(1, describe(error))
            return
        }
        if let duration = options.duration {
            try? await Task.sleep(for: .seconds(duration))
            finish(0)
        }
    }

    /// Waits until the request to speak is accepted (true) or rejected (false, and the run ends).
    private func waitForSeat(_ room: VoiceRoom) async -> Bool {
        for await state in await room.states() {
            if state.mySeat != nil { return true }
            switch state.requestStatus {
            case .rejected?: finish(1, "the request to speak in \(options.room) was rejected"); return false
            case .expired?: finish(1, "the request to speak in \(options.room) expired"); return false
            default: continue
            }
        }
        return false
    }

    /// Ends the run when the room is over for this bot.
    private func watch(_ states: AsyncStream<RoomState>) async {
        for await state in states {
            switch state.status {
            case .kicked(let by, _): finish(1, "kicked from room \(options.room)\(by.isEmpty ? "" : " by \(by)")")
            case .ended(let reason): finish(0, "room \(options.room) ended (\(reason))")
            case .failed(let reason) where joined.load(ordering: .relaxed): finish(1, reason)
            default: continue
            }
        }
    }

    private func describeConnect(_ error: MajlisError) -> String {
        switch error {
        case .server(let refusal) where [.unauthorized, .tokenExpired, .forbidden].contains(refusal.code):
            return "bad token: \(refusal.message)"
        case .notConnected:
            return "server unreachable at \(options.url)"
        case .closed(nil, let reason):
            let tlsHint = options.url.hasPrefix("wss:") && options.trustedCertificate == nil && reason.contains("certificate")
            return "cannot connect to \(options.url): \(reason)" + (tlsHint ? "; a server's own certificate is trusted with --trust-cert FILE.pem" : "")
        default:
            return describe(error)
        }
    }

    private func describe(_ error: MajlisError) -> String {
        switch error.code {
        case .roomNotFound?: return "room \(options.room) not found (use --create to create it)"
        case .seatOccupied?: return "seat \((options.seat ?? -1) + 1) is taken"
        // Seats are numbered from 1 where people see them: not the protocol's index.
        case .seatOutOfRange?: return "room \(options.room) has no seat \((options.seat ?? -1) + 1) (seats are numbered from 1)"
        default: return error.description
        }
    }
}
