#if os(Linux)
import Foundation
import MajlisAudio
import MajlisProtocol
import MajlisTransport

/// The media capability over the Majlis media plane (docs/protocol.md section 12): binds its UDP
/// address with STUN, sends the microphone as Opus in SRTP every 20 ms while it may publish, and
/// plays what it hears (an adaptive jitter buffer and Opus decoder per speaker, mixed) into a sink.
///
/// On a lossy network it protects what it sends as the server's receiver reports say it must
/// (`ProtectionPolicy`: Opus FEC, RED, bitrate, and frames per packet under what the server says
/// its uplink carries), answers NACKs from a cache of what it sent, and
/// asks the server for what it missed. It rebinds (a new socket, a new binding) when the network
/// changes (`networkChanged()`) or when a bound path hears nothing from the server for three
/// seconds; until a binding is answered it is sent four times a second.
///
/// The media plane itself, and the voice pipeline around it, are `MediaClientCore`'s (no I/O);
/// this engine hosts it on a UDP socket, the devices and a paced clock, on one thread of its
/// own: every 20 ms a tick (the settings asked since the last one, the microphone in, datagrams
/// and sound out), and between ticks whatever arrives. What the app asks, from any thread, waits
/// in one inbox (`MediaCommand`s, in order) for the next tick. `stop()` returns once that
/// thread has ended, so an engine stopped and configured again never runs two.
public final class LiveMediaEngine: MediaEngine, @unchecked Sendable {
    // Audited: `core`, `inbox`, `socket`, `running` and `ended` are used under `lock` only;
    // `source` and `sink` on the engine's thread only, but for their `latency` (read from any
    // thread).
    public typealias Statistics = MediaStatistics

    private let source: any AudioSource
    /// Whether `source` goes on by itself (a device) rather than waiting to be read (a file).
    private let live: Bool
    private let sink: any AudioSink
    private let lock = NSLock()
    private let core: MediaClientCore
    /// Settings asked for since the last tick, in order.
    private var inbox: [MediaCommand] = []
    private var socket: UDPSocket
    private var running = false
    /// Signalled when the engine's thread has ended (nil while none runs).
    private var ended: DispatchSemaphore?
    private let logger: Logger

    /// An engine reading `source` and playing into `sink`; `processing` on the microphone
    /// (`.standard` where a microphone and a speaker share a room; off for a file or a tone);
    /// `profile` speech, music (Opus's general audio mode, full band, 64 kb/s) or stereo music
    /// (the same in two channels, 96 kb/s: stereo music tracks are sent as they are); `bitrate`
    /// overrides the profile's. A speaker who sends stereo is played in stereo to a stereo sink.
    public init(
        source: any AudioSource, sink: any AudioSink, bitrate: Int? = nil, profile: AudioProfile = .speech,
        processing: VoiceProcessing = .off, effect: VoiceEffect = .none, logger: Logger = .silent
    ) throws(MajlisError) {
        self.source = source
        live = source.isLive
        self.sink = sink
        self.logger = logger
        do {
            socket = try Self.makeSocket()
            core = try MediaClientCore(
                bitrate: bitrate, profile: profile, processing: processing, effect: effect, playbackChannels: sink.channels, logger: logger)
        } catch {
            throw MajlisError.misuse("cannot start media: \(error)")
        }
    }

    private static func makeSocket() throws(MediaError) -> UDPSocket {
        try UDPSocket(host: "0.0.0.0", port: 0, receiveTimeoutMilliseconds: 100)
    }

    private func withCore<T>(_ body: (MediaClientCore) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(core)
    }

    /// Whether the server answered the binding.
    public var isBound: Bool { withCore { $0.isBound } }

    /// The local UDP port media uses now.
    public var localPort: Int { withCore { _ in socket.port } }

    /// What the engine counted.
    public var statistics: Statistics { withCore { $0.statistics } }

    public var deviceLatency: Double { source.latency + sink.latency }

    // MARK: MediaEngine

    public func configure(_ media: JSONValue?) async {
        guard let settings = MediaSettings(media) else {
            logger.warning("the room gave no usable media settings")
            return
        }
        let now = MonotonicClock.milliseconds()
        let started = withCore { core -> (datagrams: [[UInt8]], thread: DispatchSemaphore?)? in
            // The same settings again (a resync): keep the sessions, the binding and what each
            // speaker's buffer learned.
            if running && core.isConfigured(for: settings) { return ([], nil) }
            guard let datagrams = try? core.configure(settings, now: now) else { return nil }
            defer { running = true }
            guard !running else { return (datagrams, nil) }
            let done = DispatchSemaphore(value: 0)
            ended = done
            return (datagrams, done)
        }
        guard let started else {
            logger.warning("the room's media key is unusable")
            return
        }
        send(started.datagrams)
        if let done = started.thread {
            Thread.detachNewThread {
                ThreadName.set("majlis-voice")
                self.serve()
                done.signal()
            }
        }
    }

    public func setPublishing(_ publishing: Bool) async { ask(.publish(publishing)) }

    public func setCaptureVolume(_ volume: Int) async { ask(.captureVolume(volume)) }

    public func setPlaybackVolume(_ volume: Int) async { ask(.playbackVolume(volume)) }

    public func setRemoteMuted(ssrc: UInt32, muted: Bool) async { ask(.muteRemote(ssrc: ssrc, muted: muted)) }

    public func setRemoteVolume(ssrc: UInt32, volume: Int) async { ask(.remoteVolume(ssrc: ssrc, volume: volume)) }

    public func setVoiceProcessing(_ processing: VoiceProcessing) async { ask(.processing(processing)) }

    public func setVoiceEffect(_ effect: VoiceEffect) async { ask(.effect(effect)) }

    /// Plays music or a sound effect: from the start, `loops` times (0: until stopped), into what
    /// the room hears while the user may be heard (`.room`, and played here too) or only here
    /// (`.local`). Pause, resume, seek, stop and volumes are the track's own.
    public func play(_ track: MusicTrack, loops: Int = 1, destination: MusicTrack.Destination = .room) {
        track.play(loops: loops, destination: destination)
        ask(.play(track))
    }

    public func setSpatialSound(_ positions: [UInt32: SpatialPosition]?) async { ask(.spatial(positions)) }

    /// Puts `tap` at `point` (nil: removes the one there), from the next frame on. A speaker's
    /// tap sees that speaker's voice before it is mixed (changes to it are not heard).
    public func setTap(_ tap: (any AudioTap)?, at point: AudioTapPoint) { ask(.tap(tap, at: point)) }

    /// In-ear monitoring: the user hears their own voice, processed and with its effect, at
    /// `volume` (0...400; 0 off). Meant for headphones: from a speaker it would be heard twice.
    public func setInEarMonitoring(volume: Int) { ask(.monitor(volume: volume)) }

    /// Queues a setting for the next tick.
    private func ask(_ command: MediaCommand) {
        withCore { _ in inbox.append(command) }
    }

    /// Stops sending and playing; returns once the engine's thread has ended.
    public func stop() async {
        let thread = withCore { _ -> DispatchSemaphore? in
            running = false
            defer { ended = nil }
            return ended
        }
        guard let thread else { return }
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                thread.wait()
                finished.resume()
            }
        }
    }

    /// The device moved to another network (or its address may have changed): media continues
    /// from a new socket, bound again at once.
    public func networkChanged() {
        guard let fresh = try? Self.makeSocket() else {
            logger.warning("cannot open a new media socket")
            return
        }
        let datagrams = withCore { core in
            socket = fresh  // the engine's thread lets go of the old one after its next wait
            return core.rebind(reason: "the network changed", now: MonotonicClock.milliseconds())
        }
        send(datagrams)
    }

    // MARK: Threads

    /// What is queued on the socket, within reason: a flood must not hold up the next tick.
    private func receiveQueued(into buffer: inout [UInt8]) {
        let socket = withCore { _ in self.socket }
        for _ in 0..<64 {
            guard let (length, _) = socket.receive(into: &buffer, wait: false) else { return }
            let packet = Array(buffer.prefix(length))
            let now = MonotonicClock.milliseconds()
            send(withCore { $0.receive(packet, now: now) })
        }
    }

    private func send(_ datagrams: [[UInt8]]) {
        guard !datagrams.isEmpty else { return }
        let (socket, server) = withCore { core in (self.socket, core.server) }
        guard let server else { return }
        for bytes in datagrams { socket.send(bytes, to: server) }
    }

    /// The engine's thread: a tick every 20 ms, and until each one, what arrives.
    private func serve() {
        var buffer = [UInt8](repeating: 0, count: 2048)
        var next = MonotonicClock.milliseconds()
        while withCore({ _ in self.running }) {
            let wait = next - MonotonicClock.milliseconds()
            if wait > 0 {
                let socket = withCore { _ in self.socket }
                if socket.waitReadable(milliseconds: min(wait, 20)) { receiveQueued(into: &buffer) }
                continue
            }
            // Late (a busy machine; a device whose processing cannot keep up: the microphone's
            // takes 90% of a core in a debug build, 12% in release): the tick takes what arrived
            // first, so a thread that never waits still hears. Late ticks then run back to back,
            // as many as were missed: a recording or a file loses no frame.
            receiveQueued(into: &buffer)
            next += Double(AudioFormat.frameMilliseconds)
            let reading = withCore { core in
                defer { inbox = [] }
                inbox.forEach(core.apply)
                return core.wantsMicrophone(live: live)
            }
            let microphone = reading ? source.nextFrame() : nil
            let now = MonotonicClock.milliseconds()
            let tick = withCore { $0.tick(now: now, microphone: microphone, channels: source.channels) }
            if let reason = tick.rebind {
                // The path went silent: the core binds again, from a new socket.
                if let fresh = try? Self.makeSocket() {
                    withCore { _ in socket = fresh }
                } else {
                    logger.warning("cannot open a new media socket (\(reason))")
                }
            }
            send(tick.datagrams)
            sink.play(tick.playout)
        }
    }
}
#endif
