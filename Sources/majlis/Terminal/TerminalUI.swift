import Dispatch
import Foundation
import MajlisAudio
import MajlisCommandLine
import MajlisKit
import MajlisProtocol
import Synchronization

/// `majlis join --tui`: the room in a terminal, on VoiceRoom and its presenter (the view layer),
/// in the language of `LC_ALL`/`LANG`, with the sound server's microphone and speaker when the
/// machine has one.
final class TerminalUI: Sendable {
    private struct Screen {
        var state: RoomState
        var panel = ScreenLayout.Panel.chat
        var input: String?
        var note: String?
        /// Why the client stopped for good (the status line keeps saying it).
        var failure: String?
    }

    let options: JoinOptions
    private let terminal: Terminal
    private let signaling: LiveSignalingClient
    /// Answers the app's requests for this client's log while the room runs.
    private let responder: LogResponder
    private let room: VoiceRoom
    private let media: any MediaEngine
    /// The `--music` track, which `k` pauses and resumes.
    private let music: MusicTrack?
    private let sound: SoundDevices
    private let recorder: RecordingSink
    private let presenter: VoiceRoomPresenter
    private let screen: Mutex<Screen>
    /// The microphone's processing, the voice effect's preset and spatial sound, as the keys set them.
    private let voice: Mutex<(processing: VoiceProcessing, preset: VoiceEffect.Preset, spatial: Bool)>
    private let done = DispatchSemaphore(value: 0)
    private let status = Atomic<Int32>(0)

    static func run(_ options: JoinOptions) throws -> Int32 {
        try TerminalUI(options: options).runBlocking()
    }

    init(options: JoinOptions) throws {
        self.options = options
        let environment = ProcessInfo.processInfo.environment
        presenter = VoiceRoomPresenter(language: Language(localeIdentifier: environment["LC_ALL"] ?? environment["LANG"] ?? "en"))
        let logger: Logger
        (signaling, logger, responder) = Bot.signaling(options)
        recorder = RecordingSink(channels: options.stereo ? 2 : 1)
        // A stereo speaker (a mono mix plays in both channels), so that `h` can place the seats.
        sound = SoundDevices.open(microphone: options.mic == nil, speaker: options.record == nil, stereo: true)
        (media, music) = try Bot.mediaEngine(options, recorder: recorder, sound: sound)
        room = VoiceRoom(roomId: options.room, signaling: signaling, media: media, logger: logger)
        voice = Mutex((
            Bot.processing(options, sound: sound), VoiceEffect.Preset.allCases.first { $0.effect == options.effect } ?? .none, options.spatial
        ))
        screen = Mutex(Screen(state: RoomState(roomId: options.room)))
        terminal = try Terminal()
    }

    func runBlocking() -> Int32 {
        signal(SIGWINCH, SIG_IGN)
        let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global())
        resize.setEventHandler { self.redraw() }
        resize.resume()
        var stops: [DispatchSourceSignal] = []
        for number in [SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { self.done.signal() }
            source.resume()
            stops.append(source)
        }
        redraw()
        let main = Task { await self.start() }
        Thread.detachNewThread { self.readKeys() }
        done.wait()
        main.cancel()
        Bot.wrapUp(room: room, media: media, signaling: signaling, leave: true, patience: 2)
        responder.stop()
        sound.close()
        terminal.restore()
        let failure = screen.withLock { $0.failure }
        if let failure { complain("majlis join: \(failure)") }
        if !Bot.save(recorder, to: options.record) { return 1 }
        _ = (resize, stops)
        return status.load(ordering: .relaxed)
    }

    private func start() async {
        if options.spatial { await room.setSpatialSound(true) }
        if let note = JoinCommand.equalizerNote(options.effect.equalizer, profile: options.profile) { show(presenter.text(note)) }
        let states = await room.states()
        Task {
            for await state in states {
                self.screen.withLock { $0.state = state }
                self.check(state.status)
                self.redraw()
            }
        }
        // Seat emoji and gifts are not part of the state: each shows as a note, by name.
        let events = await room.events()
        Task {
            for await event in events {
                // (The state is read only for these two: every other event passes by.)
                switch event {
                case .seatEmoji(let index, let user, _, let item):
                    let name = await self.name(of: user)
                    self.show("\(name) → \(self.presenter.text(.seat(index + 1))): \(item)")
                case .giftSent(let gift):
                    let name = await self.name(of: gift.to)
                    self.show("\(gift.fromName) → \(name): \(gift.item)" + (gift.count > 1 ? " ×\(gift.count)" : ""))
                default:
                    continue
                }
            }
        }
        do {
            _ = try await signaling.connect()
        } catch {
            fail(connectFailure(error))
            return
        }
        do {
            try await room.join(create: options.create)
            if let seat = options.seat { try await room.takeSeat(seat) }
            if options.request { try await room.requestSeat() }
            if let text = options.say { try await room.sendChat(text) }
        } catch {
            if await room.state.status == .joined { show(presenter.describe(error)) } else { fail(presenter.describe(error)) }
        }
    }

    /// Why connecting failed, in plain words with the server's own reason.
    private func connectFailure(_ error: MajlisError) -> String {
        switch error {
        case .server(let refusal): return "\(presenter.describe(error)) (\(refusal.message))"
        case .notConnected: return "\(presenter.text(.notConnected)): \(options.url)"
        case .closed(nil, let reason): return "\(presenter.text(.notConnected)): \(reason) · \(options.url)"
        default: return presenter.describe(error)
        }
    }

    /// Ends for good when the room is over for this user: the reason stays on screen until `q`.
    private func check(_ roomStatus: RoomState.Status) {
        switch roomStatus {
        case .failed(let reason): fail(presenter.text(.failed(reason)), replacing: false)
        case .kicked: status.store(1, ordering: .relaxed)
        default: break
        }
    }

    /// Stops for good with `reason` (a reason given already stays unless `replacing`: the
    /// intent that failed words it better than the state's generic one).
    private func fail(_ reason: String, replacing: Bool = true) {
        status.store(1, ordering: .relaxed)
        screen.withLock { if replacing || $0.failure == nil { $0.failure = reason } }
        redraw()
    }

    /// A member's display name as the room has it now (their id when they are not in it).
    private func name(of user: String) async -> String {
        await room.state.members.first { $0.id == user }?.name ?? user
    }

    private func show(_ note: String?) {
        screen.withLock { $0.note = note }
        redraw()
    }

    /// Draws the screen as it is now. Called from the key reader, the state stream and resizes:
    /// reading the screen and drawing it happen under one lock, so a draw made from an older
    /// reading can never land after a newer one (and stay on screen until the next change).
    private func redraw() {
        screen.withLock { current in
            let size = terminal.size
            let layout = ScreenLayout(rows: size.rows, columns: size.columns, presenter: presenter)
            var note = current.note
            if let failure = current.failure { note = "\(failure) · \(presenter.text(.pressToQuit))" }
            terminal.draw(layout.lines(presenter.present(current.state), panel: current.panel, sound: sound.description(presenter), input: current.input, note: note))
        }
    }

    /// Runs an intent, showing why in plain words if it did not work.
    private func act(_ body: @escaping @Sendable (VoiceRoom) async throws -> Void) {
        show(nil)
        Task {
            do {
                try await body(self.room)
            } catch {
                self.show((error as? MajlisError).map(self.presenter.describe) ?? "\(error)")
            }
        }
    }

    private func readKeys() {
        var decoder = KeyDecoder()
        var buffer = [UInt8](repeating: 0, count: 256)
        reading: while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            for key in decoder.feed(Array(buffer[0..<count])) where !handle(key) { break reading }
        }
        done.signal()
    }

    /// Handles one key; false to quit.
    private func handle(_ key: KeyDecoder.Key) -> Bool {
        if key == .interrupt { return false }
        if screen.withLock({ $0.input != nil }) {
            type(key)
            return true
        }
        guard case .character(let character) = key else {
            if key == .enter, screen.withLock({ $0.failure == nil }) { screen.withLock { $0.input = "" } }
            redraw()
            return true
        }
        return command(character)
    }

    /// A key while the chat line is open.
    private func type(_ key: KeyDecoder.Key) {
        switch key {
        case .enter:
            let text = screen.withLock { screen -> String in
                defer { screen.input = nil }
                return screen.input ?? ""
            }
            if !text.trimmingCharacters(in: .whitespaces).isEmpty { act { try await $0.sendChat(text) } }
        case .escape: screen.withLock { $0.input = nil }
        case .backspace: screen.withLock { if $0.input?.isEmpty == false { $0.input?.removeLast() } }
        case .character(let character): screen.withLock { $0.input?.append(character) }
        case .interrupt, .ignored: break
        }
        redraw()
    }

    /// A command key; false to quit.
    private func command(_ character: Character) -> Bool {
        let (state, failed) = screen.withLock { ($0.state, $0.failure != nil) }
        if character == "q" { return false }
        if failed { return true }
        let view = presenter.present(state)
        switch character {
        case "t", "1"..."9":
            let index = character.wholeNumberValue.map { $0 - 1 }
            if state.mySeat != nil, let index {
                act { try await $0.switchSeat(to: index) }
            } else if state.mySeat == nil && !view.canTakeSeat && view.canRequestSeat {
                // An ask-to-speak room: asking is what taking a seat means here.
                act { try await $0.requestSeat(index) }
                show(presenter.text(.askedInstead))
            } else {
                act { try await $0.takeSeat(index) }
            }
        case "l": act { try await $0.leaveSeat() }
        case "r":
            act { room in
                if await room.state.myRequest != nil { try await room.cancelRequest() } else { try await room.requestSeat() }
            }
        case "a":
            if let request = state.requests.first { act { try await $0.acceptRequest(request.id) } }
        case "x":
            if let request = state.requests.first { act { try await $0.rejectRequest(request.id) } }
        case "m":
            if let seat = state.mySeat { act { try await $0.setMic(on: !state.seats[seat].micOn) } }
        case "c":
            screen.withLock { $0.input = "" }
        case "u":
            screen.withLock { $0.panel = $0.panel == .chat ? .members : .chat }
        case "p":
            let processing = voice.withLock { voice in
                voice.processing = voice.processing.isActive ? .off : .standard
                return voice.processing
            }
            act { await $0.setVoiceProcessing(processing) }
            show(presenter.text(.voiceProcessing(processing.isActive)))
        case "e":
            let preset = voice.withLock { voice in
                let presets = VoiceEffect.Preset.allCases
                voice.preset = presets[((presets.firstIndex(of: voice.preset) ?? 0) + 1) % presets.count]
                return voice.preset
            }
            act { await $0.setVoiceEffect(preset.effect) }
            show(presenter.text(.voiceEffect(presenter.text(.effectPreset(preset)))))
        case "k":
            guard let music else {
                show(presenter.text(.noMusic))
                break
            }
            if music.isPaused { music.resume() } else { music.pause() }
            show(presenter.text(.music(playing: !music.isPaused)))
        case "h":
            let spatial = voice.withLock { voice in
                voice.spatial.toggle()
                return voice.spatial
            }
            act { await $0.setSpatialSound(spatial) }
            show(presenter.text(.spatialSound(spatial)))
        case "y":
            if state.invite != nil { act { try await $0.replyToInvite(accept: true) } }
        case "n":
            if state.invite != nil { act { try await $0.replyToInvite(accept: false) } }
        default: break
        }
        redraw()
        return true
    }
}
