import Dispatch
import Foundation
import MajlisAudio
import MajlisKit
import MajlisProtocol
import Synchronization

/// `majlis join --tui`: the room in a terminal, on VoiceRoom and its presenter (the view layer).
final class TerminalUI: @unchecked Sendable {
    // Audited: mutable fields are behind `screen`; `terminal`, `room` and `signaling` are set once.
    private struct Screen {
        var state: RoomState
        var input: String?
        var note: String?
    }

    let options: JoinOptions
    private let terminal: Terminal
    private let signaling: LiveSignalingClient
    private let room: VoiceRoom
    private let media: any MediaEngine
    private let recorder = RecordingSink()
    private let presenter: VoiceRoomPresenter
    private let screen: Mutex<Screen>
    private let done = DispatchSemaphore(value: 0)
    private let status = Atomic<Int32>(0)

    static func run(_ options: JoinOptions) throws -> Int32 {
        try TerminalUI(options: options).runBlocking()
    }

    init(options: JoinOptions) throws {
        self.options = options
        let environment = ProcessInfo.processInfo.environment
        presenter = VoiceRoomPresenter(language: Language(localeIdentifier: environment["LC_ALL"] ?? environment["LANG"] ?? "en"))
        signaling = LiveSignalingClient(url: options.url, token: options.token)
        media = try Bot.mediaEngine(options, recorder: recorder)
        room = VoiceRoom(roomId: options.room, signaling: signaling, media: media)
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
        let left = DispatchSemaphore(value: 0)
        Task {
            try? await self.room.leave()
            await self.media.stop()
            await self.signaling.disconnect()
            left.signal()
        }
        _ = left.wait(timeout: .now() + 2)
        terminal.restore()
        if !Bot.save(recorder, to: options.record) { return 1 }
        _ = (resize, stops)
        return status.load(ordering: .relaxed)
    }

    private func start() async {
        let updates = await room.updates()
        Task {
            for await update in updates {
                if case .state(let state) = update {
                    self.screen.withLock { $0.state = state }
                    self.redraw()
                }
            }
        }
        do {
            _ = try await signaling.connect()
            try await room.join(create: options.create)
            if let seat = options.seat { try await room.takeSeat(seat) }
            if options.request { try await room.requestSeat() }
            if let text = options.say { try await room.sendChat(text) }
        } catch {
            show("\(error)")
        }
    }

    private func show(_ note: String?) {
        screen.withLock { $0.note = note }
        redraw()
    }

    private func redraw() {
        let (state, input, note) = screen.withLock { ($0.state, $0.input, $0.note) }
        let size = terminal.size
        let layout = ScreenLayout(rows: size.rows, columns: size.columns)
        terminal.draw(layout.lines(presenter.present(state), input: input, note: note))
    }

    /// Runs an intent, showing its error (if any) on the status line.
    private func act(_ body: @escaping @Sendable (VoiceRoom) async throws -> Void) {
        show(nil)
        Task {
            do { try await body(self.room) } catch { self.show("\(error)") }
        }
    }

    private func readKeys() {
        var byte: UInt8 = 0
        while read(0, &byte, 1) == 1 {
            if handle(byte) == false { break }
        }
        done.signal()
    }

    /// Handles one key; false to quit.
    private func handle(_ byte: UInt8) -> Bool {
        let typing = screen.withLock { $0.input != nil }
        if typing {
            switch byte {
            case 13, 10:
                let text = screen.withLock { screen -> String in
                    defer { screen.input = nil }
                    return screen.input ?? ""
                }
                if !text.isEmpty { act { try await $0.sendChat(text) } }
            case 27: screen.withLock { $0.input = nil }
            case 127, 8: screen.withLock { if $0.input?.isEmpty == false { $0.input?.removeLast() } }
            case 3: return false
            default:
                if byte >= 32 { screen.withLock { $0.input?.unicodeScalars.append(Unicode.Scalar(byte)) } }
            }
            redraw()
            return true
        }
        let state = screen.withLock { $0.state }
        switch byte {
        case UInt8(ascii: "q"), 3: return false
        case UInt8(ascii: "t"): act { try await $0.takeSeat() }
        case UInt8(ascii: "1")...UInt8(ascii: "9"):
            let index = Int(byte - UInt8(ascii: "1"))
            act { room in
                if await room.state.mySeat != nil { try await room.switchSeat(to: index) } else { try await room.takeSeat(index) }
            }
        case UInt8(ascii: "l"): act { try await $0.leaveSeat() }
        case UInt8(ascii: "r"):
            act { room in
                if await room.state.myRequest != nil { try await room.cancelRequest() } else { try await room.requestSeat() }
            }
        case UInt8(ascii: "a"):
            if let request = state.requests.first { act { try await $0.acceptRequest(request.id) } }
        case UInt8(ascii: "x"):
            if let request = state.requests.first { act { try await $0.rejectRequest(request.id) } }
        case UInt8(ascii: "m"):
            if let seat = state.mySeat { act { try await $0.setMic(on: !state.seats[seat].micOn) } }
        case UInt8(ascii: "c"), 13:
            screen.withLock { $0.input = "" }
            redraw()
        case UInt8(ascii: "y"):
            if state.invite != nil { act { try await $0.replyToInvite(accept: true) } }
        case UInt8(ascii: "n"):
            if state.invite != nil { act { try await $0.replyToInvite(accept: false) } }
        default: break
        }
        return true
    }
}
